package nodeview

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// wordTOMLError rewords a go-toml decode error of a hosts.toml for people:
// the line and column, the key as written in the file, and what the key
// accepts, never the Go type the decoder filled ("struct field
// nodeview.hostsTOMLEntry.SkipVerify of type bool"). Other errors are
// returned as they are.
func wordTOMLError(err error) error {
	var de *toml.DecodeError
	if !errors.As(err, &de) {
		return err
	}
	row, col := de.Position()
	msg := strings.TrimPrefix(de.Error(), "toml: ")
	if kind, goType, ok := typeMismatch(msg); ok {
		msg = fmt.Sprintf("%s is a TOML %s, want %s", tomlKey(de.Key()), kind, tomlWant(goType))
	} else if k := de.Key(); len(k) > 0 {
		msg = tomlKey(k) + ": " + msg
	}
	return fmt.Errorf("toml: line %d, column %d: %s", row, col, msg)
}

// typeMismatch reads go-toml's "cannot decode TOML <kind> into struct
// field <Go field> of type <Go type>".
func typeMismatch(msg string) (kind, goType string, ok bool) {
	rest, found := strings.CutPrefix(msg, "cannot decode TOML ")
	if !found {
		return "", "", false
	}
	kind, _, _ = strings.Cut(rest, " ")
	i := strings.LastIndex(rest, " of type ")
	if i < 0 {
		return "", "", false
	}
	return kind, rest[i+len(" of type "):], true
}

// tomlKey writes a key path as the file spells it: skip_verify, or
// skip_verify in [host."https://mirror.example"].
func tomlKey(k toml.Key) string {
	if len(k) == 0 {
		return "a value"
	}
	name := k[len(k)-1]
	if len(k) == 1 {
		return name
	}
	table := make([]string, 0, len(k)-1)
	for _, p := range k[:len(k)-1] {
		if strings.ContainsAny(p, ".:/\" ") {
			p = strconv.Quote(p)
		}
		table = append(table, p)
	}
	return fmt.Sprintf("%s in [%s]", name, strings.Join(table, "."))
}

// tomlWant says in TOML words what a Go type of hostsTOMLEntry accepts.
func tomlWant(goType string) string {
	switch strings.TrimPrefix(goType, "*") {
	case "bool":
		return "true or false"
	case "string":
		return "a string"
	case "[]string":
		return "an array of strings"
	case "map[string]interface {}", "map[string]any":
		return "a table"
	}
	return "another kind of value"
}
