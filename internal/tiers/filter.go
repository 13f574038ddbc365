package tiers

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
}

// Filter copies the interesting part of a `go test -json` stream from r to
// w: every "tier NAME:" line a test logs (see Require), the whole output of
// every failed test and of every failed package, build errors, and the
// packages' result lines. It reports whether anything failed.
func Filter(r io.Reader, w io.Writer) (failed bool, err error) {
	buf := map[string]*strings.Builder{} // package + test → output
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if json.Unmarshal(line, &e) != nil || e.Action == "" {
			fmt.Fprintf(w, "%s\n", line) // not test2json: pass it on
			continue
		}
		key := e.Package + "\x00" + e.Test
		switch e.Action {
		case "build-output":
			fmt.Fprint(w, e.Output)
		case "build-fail":
			failed = true
		case "output":
			if i := strings.Index(e.Output, "tier "); i >= 0 && isTierLine(e.Output[i:]) {
				fmt.Fprintf(w, "%s %s", shortPkg(e.Package), strings.TrimLeft(e.Output[i:], " "))
				if !strings.HasSuffix(e.Output, "\n") {
					fmt.Fprintln(w)
				}
			}
			if e.Test == "" && isResultLine(e.Output) {
				fmt.Fprint(w, e.Output)
				continue
			}
			b := buf[key]
			if b == nil {
				b = &strings.Builder{}
				buf[key] = b
			}
			b.WriteString(e.Output)
		case "fail":
			failed = true
			if b := buf[key]; b != nil {
				fmt.Fprint(w, b.String())
			}
			delete(buf, key)
		case "pass", "skip":
			delete(buf, key)
		}
	}
	return failed, sc.Err()
}

// isTierLine matches "tier NAME: ..." with NAME a lowercase word.
func isTierLine(s string) bool {
	name, _, ok := strings.Cut(strings.TrimPrefix(s, "tier "), ": ")
	if !ok || name == "" {
		return false
	}
	for _, r := range name {
		if r < 'a' || r > 'z' {
			return false
		}
	}
	return true
}

func isResultLine(s string) bool {
	return strings.HasPrefix(s, "ok  \t") || strings.HasPrefix(s, "FAIL\t") || strings.HasPrefix(s, "?   \t") || strings.HasPrefix(s, "--- FAIL")
}

func shortPkg(p string) string {
	return strings.TrimPrefix(p, "github.com/pullpath/pullpath/")
}
