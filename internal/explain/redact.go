package explain

import (
	"net/url"

	"github.com/pullpath/pullpath/internal/redact"
)

// redactURL returns u's text with its query values (but ns, service and
// scope) and any user information replaced: signed storage URLs (sig=, se=,
// X-Amz-Signature=) and token requests carry credentials there.
func redactURL(u *url.URL) string { return redact.URL(u) }

// Redact removes secrets from free text with pullpath's one redactor
// (internal/redact): URL query strings and user information, Authorization
// values, JWTs, Basic base64, AWS key ids and signatures, cookies, and
// secret key=value pairs.
func Redact(s string) string { return redact.String(capText(s, 4*MaxMessageBytes)) }
