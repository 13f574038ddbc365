package registry

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/pullpath/pullpath/internal/redact"
	"github.com/pullpath/pullpath/internal/verdict"
)

// maxErrorBody bounds how much of an error body is read.
const maxErrorBody = 64 << 10

// ErrorCode is one entry of a registry error body.
type ErrorCode struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// ReadErrorBody reads a registry error body ({"errors":[{code,message}]}),
// at most 64 KiB, and returns its codes plus a short text of the body for
// evidence when it is not JSON (e.g. S3/GCS XML).
func ReadErrorBody(body io.Reader) ([]ErrorCode, string) {
	if body == nil {
		return nil, ""
	}
	data, _ := io.ReadAll(io.LimitReader(body, maxErrorBody))
	var env struct {
		Errors []ErrorCode `json:"errors"`
	}
	if json.Unmarshal(data, &env) == nil && len(env.Errors) > 0 {
		for i := range env.Errors {
			env.Errors[i].Code = redact.String(strings.ToUpper(env.Errors[i].Code))
			env.Errors[i].Message = redact.String(env.Errors[i].Message)
		}
		return env.Errors, ""
	}
	// Redact the whole body before cutting it, so that no secret is cut
	// into a piece the redactor no longer recognises.
	text := strings.TrimSpace(redact.String(strings.ToValidUTF8(string(data), "?")))
	if len(text) > 300 {
		text = strings.ToValidUTF8(text[:300], "") + "…"
	}
	return nil, text
}

func hasCode(codes []ErrorCode, code string) bool {
	for _, c := range codes {
		if c.Code == code {
			return true
		}
	}
	return false
}

// codesText renders codes the way containerd 2.x appends them to its error.
func codesText(codes []ErrorCode) string {
	parts := make([]string, 0, len(codes))
	for _, c := range codes {
		parts = append(parts, strings.ToLower(strings.ReplaceAll(c.Code, "_", " "))+": "+c.Message)
	}
	return strings.Join(parts, "; ")
}

// StatusError is an unexpected HTTP status with the registry's error codes.
type StatusError struct {
	Method string
	URL    string // redacted
	Status string
	Code   int
	Codes  []ErrorCode
	Body   string // short non-JSON body text
	Header http.Header
}

func (e *StatusError) Error() string {
	s := fmt.Sprintf("unexpected status from %s request to %s: %s", e.Method, e.URL, e.Status)
	if len(e.Codes) > 0 {
		s += ": " + codesText(e.Codes)
	} else if e.Body != "" {
		s += ": " + e.Body
	}
	return redact.String(s)
}

// statusCause maps an unexpected status on a registry request to a cause.
// anonymous tells whether the request carried no credentials.
func statusCause(e *StatusError, anonymous bool, manifest bool) string {
	bodyLower := strings.ToLower(e.Body + " " + codesText(e.Codes))
	switch {
	case e.Code == http.StatusTooManyRequests || hasCode(e.Codes, "TOOMANYREQUESTS"):
		return verdict.CodeRegistryRatelimit
	case e.Code >= 500:
		return verdict.CodeRegistryUnavailable
	case e.Code == http.StatusUnauthorized:
		if ch, ok := Bearer(ParseChallenges(e.Header.Get("WWW-Authenticate"))); ok && ch.Params["error"] == "insufficient_scope" {
			return verdict.CodeAuthzDenied
		}
		if hasCode(e.Codes, "DENIED") {
			return verdict.CodeAuthzDenied
		}
		if anonymous {
			return verdict.CodeAuthNoCredentials
		}
		return verdict.CodeAuthBadCredentials
	case e.Code == http.StatusForbidden:
		if strings.Contains(bodyLower, "client with ip") || strings.Contains(bodyLower, "not allowed access") {
			return verdict.CodeAuthzIPDenied
		}
		return verdict.CodeAuthzDenied
	case e.Code == http.StatusNotFound:
		if hasCode(e.Codes, "NAME_UNKNOWN") {
			return verdict.CodeManifestNameUnknown
		}
		if manifest {
			return verdict.CodeManifestUnknown
		}
		return verdict.CodeTransferStatus
	}
	return verdict.CodeRegistryProtocol
}
