// Package depcheck holds no code: its test fails when a pullpath binary
// links a package none of its commands uses (Go's plugin package, kustomize,
// cli-runtime, go-redis, OpenTelemetry exporters, the lab or client-go in the
// node binary), or when a binary is linked in dynamic mode (every symbol
// exported, as Go's plugin package makes the linker do).
package depcheck
