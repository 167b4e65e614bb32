// Package bus is purser's layer over NATS JetStream: the streams and
// durable consumers of DESIGN.md defined once in code and provisioned
// idempotently at start-up, a watermill Publisher that sets stable
// Nats-Msg-Ids and purser's headers, a watermill Subscriber bound to those
// durable consumers, and a watermill router with purser's middleware.
//
// The Publisher and Subscriber are our own thin layer over nats.go's
// jetstream package rather than watermill-nats: watermill-nats' jetstream
// package never applies a consumer configuration (its consumers are not
// durable and redeliver forever), cannot send InProgress while a slow
// handler (a model call) works, leaves an undecodable message neither acked
// nor nacked, and measured about 2.4x a raw nats.go hop. Watermill's router,
// middleware and message type stay on top.
package bus
