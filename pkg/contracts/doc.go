// Package contracts holds every type that crosses the bus or the client
// socket, with its validation and, for tool arguments, its JSON schema.
//
// A struct here is the single source of truth: the same type decodes a
// message (unknown fields rejected), validates it (validate tags), and for
// tool arguments generates the strict schema handed to the model. A breaking
// change is a new type, never an edit of an old one: old golden files under
// testdata must keep decoding.
package contracts
