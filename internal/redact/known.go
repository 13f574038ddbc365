package redact

import (
	"encoding/base64"
	"encoding/json"
	"net/url"
	"sort"
	"strings"
)

// minKnown is the shortest known secret Known replaces: shorter ones would
// cut ordinary words out of the text.
const minKnown = 6

// Known removes secrets the caller holds (the password it was given, the
// tokens it was issued) from text, whatever surrounds them, in the forms
// they leak in: as they are, base64 (with and without padding),
// URL-encoded and JSON-escaped. It is the second line behind String, which
// can only recognise secrets by their shape.
type Known struct{ r *strings.Replacer }

// NewKnown builds a Known for secrets; pairs are user, password pairs
// whose Basic form (base64 of user:password) is also a secret.
func NewKnown(secrets []string, pairs ...[2]string) *Known {
	forms := map[string]bool{}
	add := func(s string) {
		if len(s) >= minKnown {
			forms[s] = true
		}
	}
	for _, p := range pairs {
		if p[1] == "" {
			continue
		}
		basic := p[0] + ":" + p[1]
		add(base64.StdEncoding.EncodeToString([]byte(basic)))
		add(base64.RawStdEncoding.EncodeToString([]byte(basic)))
		secrets = append(secrets, p[1])
	}
	for _, s := range secrets {
		if len(s) < minKnown {
			continue
		}
		add(s)
		add(url.QueryEscape(s))
		add(url.PathEscape(s))
		if b, err := json.Marshal(s); err == nil {
			add(strings.Trim(string(b), `"`))
		}
		add(base64.StdEncoding.EncodeToString([]byte(s)))
		add(base64.RawStdEncoding.EncodeToString([]byte(s)))
	}
	if len(forms) == 0 {
		return &Known{}
	}
	list := make([]string, 0, len(forms))
	for f := range forms {
		list = append(list, f)
	}
	// Longest first, so that a form containing another is replaced whole.
	sort.Slice(list, func(i, j int) bool {
		return len(list[i]) > len(list[j]) || len(list[i]) == len(list[j]) && list[i] < list[j]
	})
	args := make([]string, 0, 2*len(list))
	for _, f := range list {
		args = append(args, f, Marker)
	}
	return &Known{r: strings.NewReplacer(args...)}
}

// String redacts s by shape (String) and then removes every known secret.
// A nil Known redacts by shape only.
func (k *Known) String(s string) string {
	s = String(s)
	if k == nil || k.r == nil {
		return s
	}
	return k.r.Replace(s)
}
