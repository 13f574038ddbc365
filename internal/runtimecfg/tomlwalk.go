package runtimecfg

import (
	"fmt"
	"slices"
	"strings"

	tomlu "github.com/pelletier/go-toml/v2/unstable"
)

// tomlEntry is one expression of a TOML document as written: a table
// header ([t], [[t]]) or a key = value, with its full key path (the
// enclosing table's path, then the key's dotted parts), the same path with
// array-of-tables indexes ("registry[1].mirror[0].location": the n-th
// [[registry]] of the document, the m-th [[registry.mirror]] under it) and
// the line of its first key part.
type tomlEntry struct {
	Table   bool // a [t] or [[t]] header; false for key = value
	Path    []string
	Indexed []string
	Line    int
}

// walkTOML yields every expression of a TOML document in order. It reads
// the document with go-toml's unstable parser, which keeps positions and
// stops at the first syntax error (the decoders report that error with
// its line themselves).
func walkTOML(data []byte, yield func(tomlEntry)) {
	p := tomlu.Parser{}
	p.Reset(data)
	var table, plainTable []string
	counts := map[string]int{}
	for p.NextExpression() {
		e := p.Expression()
		parts := []string{}
		for it := e.Key(); it.Next(); {
			parts = append(parts, string(it.Node().Data))
		}
		line := 0
		if n := e.Key(); n.Next() {
			line = p.Shape(n.Node().Raw).Start.Line
		}
		switch e.Kind {
		case tomlu.Table, tomlu.ArrayTable:
			table = indexed(parts, counts, e.Kind == tomlu.ArrayTable)
			plainTable = parts
			yield(tomlEntry{Table: true, Path: parts, Indexed: table, Line: line})
		case tomlu.KeyValue:
			yield(tomlEntry{Path: append(slices.Clone(plainTable), parts...), Indexed: append(slices.Clone(table), parts...), Line: line})
		}
	}
}

// indexed gives an array-of-tables header its index: [[registry]] is
// registry[n], [[registry.mirror]] registry[n].mirror[m] under the latest
// registry.
func indexed(parts []string, counts map[string]int, array bool) []string {
	out := make([]string, 0, len(parts))
	for i, p := range parts {
		prefix := strings.Join(out, ".")
		key := prefix + "." + p
		if i == len(parts)-1 && array {
			n := counts[key]
			counts[key] = n + 1
			out = append(out, fmt.Sprintf("%s[%d]", p, n))
			continue
		}
		if n, ok := counts[key]; ok && n > 0 {
			out = append(out, fmt.Sprintf("%s[%d]", p, n-1))
			continue
		}
		out = append(out, p)
	}
	return out
}
