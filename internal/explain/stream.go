package explain

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/pullpath/pullpath/internal/verdict"
	"io"
	"strings"
)

// MaxLineBytes is the longest line ExplainReader reads as one piece. A
// longer line is read in pieces of this size, each one classified, so no
// byte of it goes unread.
const MaxLineBytes = 64 << 10

// maxFindings caps the distinct findings one input can hold. A message
// that would add one more is counted in Input.SkippedLines.
const maxFindings = 10000

// headBytes is how much of the input ExplainReader looks at to detect the
// format.
const headBytes = 64 << 10

// Input says how much of the input explain read (docs/contract.md's
// ExplainReport "input").
type Input struct {
	// Lines is the number of lines read.
	Lines int64 `json:"lines"`
	// Bytes is the number of bytes read.
	Bytes int64 `json:"bytes"`
	// SkippedLines counts lines explain read but could not consider: a
	// failure past the cap on distinct findings, or the rest of the input
	// after a read error. When it is not zero, "no failure found" is not a
	// claim explain can make.
	SkippedLines int64 `json:"skipped_lines"`
	// SplitLines counts lines longer than MaxLineBytes, read in pieces.
	SplitLines int64 `json:"split_lines,omitempty"`
}

// Report is what ExplainReader found in one input.
type Report struct {
	// Findings are the pull failures, in input order, grouped as Explain
	// groups them.
	Findings []Finding
	// Input says what was read and what was skipped.
	Input Input
}

// ExplainReader reads input of any size from r and explains it as Explain
// does. Plain text (a runtime log of any length, one JSON record per line
// as journalctl -o json writes it) is streamed line by line with bounded
// memory, and every line is considered. Structured input (kubectl get -o
// json|yaml, describe output) is read whole up to MaxInputBytes; a larger
// one is streamed line by line as text. On an error it returns what it
// found before the error, and the report says how much was read.
func ExplainReader(r io.Reader) (Report, error) {
	cr := &countingReader{r: r}
	br := bufio.NewReaderSize(cr, MaxLineBytes)
	var rep Report
	head, err := br.Peek(headBytes)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return rep, fmt.Errorf("reading input: %w", err)
	}
	h := bytes.TrimSpace(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")))
	if len(h) == 0 {
		// A head of only whitespace can still be followed by text.
		if len(head) < headBytes {
			return rep, fmt.Errorf("reading input: %w: the input is empty", ErrUnrecognized)
		}
	} else if !looksText(h) {
		return rep, fmt.Errorf("reading input: %w: the input is binary, not text", ErrUnrecognized)
	}
	ex := newExplainer()
	var ndjson bool
	if len(h) > 0 && (h[0] == '{' || h[0] == '[' || looksYAMLObject(h) || looksDescribe(h)) {
		whole, rest, err := readUpTo(br, MaxInputBytes)
		if err != nil {
			rep.Input = countWhole(whole)
			rep.Input.SkippedLines = 1
			return rep, fmt.Errorf("reading input: %w", err)
		}
		if rest == nil {
			msgs, perr := Parse(whole)
			for _, m := range msgs {
				ex.add(m)
			}
			rep.Findings, rep.Input = ex.result(), countWhole(whole)
			rep.Input.SkippedLines = ex.skipped
			if perr == nil || !(h[0] == '{' && firstLineIsJSON(h)) {
				return rep, perr
			}
			// One JSON record per line (journalctl -o json, a JSON
			// logger): read it as lines.
			ex, ndjson = newExplainer(), true
		}
		// Too large to read whole, or JSON lines: stream it as text.
		br = bufio.NewReaderSize(io.MultiReader(bytes.NewReader(whole), restOf(rest)), MaxLineBytes)
	}
	p := newTextParser(ex.add)
	p.jsonLines = ndjson || len(h) > 0 && h[0] == '{'
	var line int64
	for {
		b, err := br.ReadSlice('\n')
		if len(b) > 0 {
			if errors.Is(err, bufio.ErrBufferFull) {
				rep.Input.SplitLines++
				p.piece(line+1, string(b))
				for errors.Is(err, bufio.ErrBufferFull) {
					b, err = br.ReadSlice('\n')
					if len(b) > 0 {
						p.piece(line+1, string(b))
					}
				}
			} else {
				p.line(line+1, string(b))
			}
			line++
		}
		if err != nil {
			p.flush()
			rep.Findings, rep.Input.Lines, rep.Input.Bytes = ex.result(), line, cr.n
			rep.Input.SkippedLines = ex.skipped
			if !errors.Is(err, io.EOF) {
				// What follows the error is unread.
				rep.Input.SkippedLines++
				return rep, fmt.Errorf("reading input after line %d: %w", line, err)
			}
			return rep, nil
		}
	}
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// readUpTo reads r whole if it holds at most limit bytes (rest is nil),
// and otherwise returns the first limit bytes and the reader of the rest.
func readUpTo(r *bufio.Reader, limit int) (whole []byte, rest io.Reader, err error) {
	var buf bytes.Buffer
	n, err := buf.ReadFrom(io.LimitReader(r, int64(limit)+1))
	if err != nil {
		return buf.Bytes(), nil, err
	}
	if n <= int64(limit) {
		return buf.Bytes(), nil, nil
	}
	return buf.Bytes(), r, nil
}

func restOf(r io.Reader) io.Reader {
	if r == nil {
		return bytes.NewReader(nil)
	}
	return r
}

// countWhole counts the lines and bytes of input read whole.
func countWhole(b []byte) Input {
	in := Input{Bytes: int64(len(b)), Lines: int64(bytes.Count(b, []byte("\n")))}
	if len(b) > 0 && b[len(b)-1] != '\n' {
		in.Lines++
	}
	return in
}

// firstLineIsJSON reports whether the first line of b is one whole JSON
// value.
func firstLineIsJSON(b []byte) bool {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b = b[:i]
	}
	return json.Valid(bytes.TrimSpace(b))
}

// explainer groups classified messages into findings one message at a
// time, so a stream never holds more than its distinct findings.
type explainer struct {
	findings []Finding
	index    map[string]int
	skipped  int64
}

func newExplainer() *explainer { return &explainer{index: map[string]int{}} }

// add classifies m and groups it into the findings.
func (e *explainer) add(m Message) {
	if !mayFail(m.Text) || !pullRelated(m) {
		return
	}
	r := classify(m.Text, m.Image)
	if !r.Failed() {
		return
	}
	if m.Image == "" {
		m.Image = r.Image
	}
	if r.Image == "" {
		r.Image = m.Image
	}
	n := m.Count
	if n < 1 {
		n = 1
	}
	v := r.Verdict
	key := r.Image + "\x00" + v.Cause + "\x00" + string(v.Role) + "\x00" + v.Endpoint
	if i, ok := e.index[key]; ok {
		f := &e.findings[i]
		f.Count += n
		if m.Last.After(f.Message.Last) {
			f.Message.Last = m.Last
		}
		if !m.First.IsZero() && (f.Message.First.IsZero() || m.First.Before(f.Message.First)) {
			f.Message.First = m.First
		}
		return
	}
	if len(e.findings) >= maxFindings {
		e.skipped++
		return
	}
	m.Text = Redact(m.Text)
	e.index[key] = len(e.findings)
	e.findings = append(e.findings, Finding{Message: m, Result: r, Count: n})
}

// result drops the detail-less back-offs that a detailed failure explains
// and returns the findings in input order.
func (e *explainer) result() []Finding {
	out := make([]Finding, 0, len(e.findings))
	for _, f := range e.findings {
		if f.Result.Verdict.Cause == verdict.CodeUnknownBackoff && explained(f, e.findings) {
			continue
		}
		out = append(out, f)
	}
	return out
}

// textParser reads plain text one line at a time: one message per line, a
// continuation line joined to the message before it, a `kubectl get events`
// table read by its MESSAGE column, and a line that is one JSON object
// read by its string fields. It hands each message on when the next one
// starts, so it holds one message at most.
type textParser struct {
	emit                      func(Message)
	cur                       Message
	pending                   bool
	msgCol, reasonCol, objCol int
	jsonLines                 bool
}

func newTextParser(emit func(Message)) *textParser {
	return &textParser{emit: emit, msgCol: -1, reasonCol: -1, objCol: -1, jsonLines: true}
}

// maxJoinedBytes caps a message joined from continuation lines; the next
// continuation line starts a message of its own.
const maxJoinedBytes = 4 * MaxMessageBytes

func (p *textParser) flush() {
	if p.pending {
		p.emit(p.cur)
		p.pending = false
	}
}

func (p *textParser) start(m Message) {
	p.flush()
	p.cur, p.pending = m, true
}

// piece reads one piece of a line longer than MaxLineBytes as a message of
// its own.
func (p *textParser) piece(n int64, s string) {
	p.start(Message{Source: "text", Text: s, Count: 1, Line: n})
}

// line reads line number n.
func (p *textParser) line(n int64, raw string) {
	line := strings.TrimRight(raw, " \t\r\n")
	t := strings.TrimSpace(line)
	if t == "" {
		return
	}
	if p.jsonLines && t[0] == '{' && t[len(t)-1] == '}' && json.Valid([]byte(t)) {
		msgs, err := parseObjects([]byte(t))
		if err == nil {
			for _, m := range msgs {
				m.Line = n
				p.start(m)
			}
			return
		}
	}
	// kubectl get events table header.
	if strings.Contains(line, "REASON") && strings.Contains(line, "MESSAGE") {
		p.msgCol = strings.Index(line, "MESSAGE")
		p.reasonCol = strings.Index(line, "REASON")
		p.objCol = strings.Index(line, "OBJECT")
		return
	}
	if p.msgCol > 0 && len(line) > p.msgCol && line[p.msgCol-1] == ' ' {
		m := Message{Source: "event", Text: strings.TrimSpace(line[p.msgCol:]), Count: 1, Line: n}
		if p.reasonCol >= 0 && p.objCol > p.reasonCol && p.objCol <= len(line) {
			m.Reason = strings.TrimSpace(line[p.reasonCol:p.objCol])
		}
		if p.objCol >= 0 && p.msgCol > p.objCol {
			m.Object = strings.TrimSpace(line[p.objCol:p.msgCol])
		}
		p.start(m)
		return
	}
	if p.pending && len(p.cur.Text) < maxJoinedBytes && isContinuation(line, p.cur.Text) {
		p.cur.Text += "\n" + t
		return
	}
	p.start(Message{Source: "text", Text: t, Count: 1, Line: n})
}
