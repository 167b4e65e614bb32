// Package deploy holds the tests of purser's deployment: every kustomize
// overlay under k8s/ renders, and each object it makes decodes strictly
// against the Kubernetes API types and keeps the rules of deploy/k8s
// (pinned images, probes, limits, no token, no Secret). It is a module of
// its own so that the Kubernetes libraries stay out of purser's go.mod;
// `make test` runs it.
package deploy
