// Package redact is pullpath's one redactor: every byte that came from the
// network (registry error bodies, challenge headers, status lines, redirect
// targets, runtime and kubelet messages) passes through String, URL or
// Query before it reaches any output, text or JSON, stdout or stderr.
//
// It removes credentials in the shapes they take in the field: Authorization
// header values (Bearer and Basic, in prose, in Go's header-map form
// `map[Authorization:[Basic …]]`, URL-encoded), JWTs and other
// three-segment tokens, Basic base64 of user:password wherever it stands,
// AWS access key ids and S3 error-body signatures, signed query strings
// (Azure SAS sig=, X-Amz-Signature, X-Goog-Signature), cookies, and
// password=, access_token=, refresh_token= and similar pairs in form bodies,
// JSON and query strings. It runs in one pass over the text and never
// lengthens a secret (ggcr's internal/redact plays the same part there).
package redact
