package explain

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"sigs.k8s.io/yaml"
)

// MaxInputBytes caps what Parse reads, and what ExplainReader reads whole
// to parse as one structured document. Event lists and describe output of
// a busy namespace stay far below it; ExplainReader streams larger input
// line by line.
const MaxInputBytes = 32 << 20

// Message is one message found in the input, with what the input says
// about it.
type Message struct {
	// Source is where the message came from: "event" (an Event object),
	// "waiting" (a container's state.waiting), "describe" (the Events
	// table of kubectl describe) or "text" (plain text).
	Source string `json:"source"`
	// Reason is the event or waiting reason (Failed, BackOff,
	// ErrImagePull, ImagePullBackOff ...), when known.
	Reason string `json:"reason,omitempty"`
	// Object is pod/<name>, with the namespace and container when known
	// (pod/ns/name, pod/ns/name/container).
	Object string `json:"object,omitempty"`
	// Image is the container's image when the input gives it apart from
	// the text.
	Image string `json:"image,omitempty"`
	// Text is the message itself.
	Text string `json:"text"`
	// Count is how many times the input says the message occurred (at
	// least 1).
	Count int `json:"count"`
	// First and Last are the first and last occurrence when known.
	First time.Time `json:"first,omitempty"`
	Last  time.Time `json:"last,omitempty"`
	// Line is the input line the message starts on, for plain text.
	Line int64 `json:"line,omitempty"`
}

// ErrUnrecognized is returned (wrapped) when the input is in no format
// Parse understands.
var ErrUnrecognized = errors.New("unrecognized input")

// Parse finds the messages in input, detecting its format: plain text (one
// message per line, continuation lines joined), `kubectl describe pod`
// output (the Events table and the containers' State/Reason/Message),
// `kubectl get events -o json|yaml` and `kubectl get pod -o json|yaml`
// (single objects and List kinds). Binary or malformed structured input
// gives an error; messages found before the error are returned with it.
func Parse(input []byte) ([]Message, error) {
	if len(input) > MaxInputBytes {
		return nil, fmt.Errorf("reading input: %d bytes is more than the %d bytes explain reads", len(input), MaxInputBytes)
	}
	input = bytes.TrimPrefix(input, []byte("\xef\xbb\xbf"))
	trimmed := bytes.TrimSpace(input)
	if len(trimmed) == 0 {
		return nil, fmt.Errorf("reading input: %w: the input is empty", ErrUnrecognized)
	}
	if !looksText(trimmed) {
		return nil, fmt.Errorf("reading input: %w: the input is binary, not text", ErrUnrecognized)
	}
	switch trimmed[0] {
	case '{', '[':
		if json.Valid(trimmed) {
			return parseObjects(trimmed)
		}
		if trimmed[0] == '{' {
			return nil, fmt.Errorf("parsing JSON: %w: the input starts like JSON but is not valid JSON", ErrUnrecognized)
		}
	}
	if looksYAMLObject(trimmed) {
		return parseYAML(trimmed)
	}
	if looksDescribe(trimmed) {
		return parseDescribe(string(trimmed)), nil
	}
	return parseText(string(trimmed)), nil
}

// looksText reports whether b is mostly printable UTF-8 text.
func looksText(b []byte) bool {
	n := len(b)
	if n > 64<<10 {
		n = 64 << 10
	}
	bad := 0
	for i := 0; i < n; {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size <= 1 || r == 0 || r < 0x20 && r != '\n' && r != '\r' && r != '\t' {
			bad++
		}
		i += size
	}
	return bad*20 < n
}

// k8sObject is the subset of Event, Pod and List that explain reads.
type k8sObject struct {
	Kind     string          `json:"kind"`
	Items    []k8sObject     `json:"items"`
	Metadata k8sMeta         `json:"metadata"`
	Spec     k8sPodSpec      `json:"spec"`
	Status   json.RawMessage `json:"status"`
	// core/v1 Event
	InvolvedObject k8sRef    `json:"involvedObject"`
	Reason         string    `json:"reason"`
	Message        string    `json:"message"`
	Count          int       `json:"count"`
	FirstTimestamp time.Time `json:"firstTimestamp"`
	LastTimestamp  time.Time `json:"lastTimestamp"`
	EventTime      time.Time `json:"eventTime"`
	Series         *struct {
		Count            int       `json:"count"`
		LastObservedTime time.Time `json:"lastObservedTime"`
	} `json:"series"`
	// events.k8s.io/v1 Event
	Note            string `json:"note"`
	Regarding       k8sRef `json:"regarding"`
	DeprecatedCount int    `json:"deprecatedCount"`
}

type k8sMeta struct {
	Name              string    `json:"name"`
	Namespace         string    `json:"namespace"`
	CreationTimestamp time.Time `json:"creationTimestamp"`
}

type k8sRef struct {
	Kind      string `json:"kind"`
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
	FieldPath string `json:"fieldPath"`
}

type k8sPodSpec struct {
	Containers          []k8sContainer `json:"containers"`
	InitContainers      []k8sContainer `json:"initContainers"`
	EphemeralContainers []k8sContainer `json:"ephemeralContainers"`
}

type k8sContainer struct {
	Name  string `json:"name"`
	Image string `json:"image"`
}

type k8sPodStatus struct {
	ContainerStatuses          []k8sContainerStatus `json:"containerStatuses"`
	InitContainerStatuses      []k8sContainerStatus `json:"initContainerStatuses"`
	EphemeralContainerStatuses []k8sContainerStatus `json:"ephemeralContainerStatuses"`
}

type k8sContainerStatus struct {
	Name  string `json:"name"`
	Image string `json:"image"`
	State struct {
		Waiting *struct {
			Reason  string `json:"reason"`
			Message string `json:"message"`
		} `json:"waiting"`
	} `json:"state"`
}

// parseObjects reads Kubernetes objects from JSON: a single object, a List
// kind, or a JSON array of objects.
func parseObjects(b []byte) ([]Message, error) {
	var objs []k8sObject
	if b[0] == '[' {
		if err := json.Unmarshal(b, &objs); err != nil {
			return nil, fmt.Errorf("parsing JSON: %w: %v", ErrUnrecognized, wordJSONError(err))
		}
	} else {
		var o k8sObject
		if err := json.Unmarshal(b, &o); err != nil {
			// A JSON object that is not a Kubernetes object (e.g. a
			// pullpath report or a log record): read its string fields.
			return parseTextFromJSON(b)
		}
		objs = []k8sObject{o}
	}
	var out []Message
	known := false
	for _, o := range objs {
		k, msgs := fromObject(o, 0)
		known = known || k
		out = append(out, msgs...)
	}
	if !known {
		return parseTextFromJSON(b)
	}
	return out, nil
}

// parseTextFromJSON reads a JSON document that is not a Kubernetes object
// (a log record, a probe report) as text: every string value that looks
// like a pull message.
func parseTextFromJSON(b []byte) ([]Message, error) {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("parsing JSON: %w: %v", ErrUnrecognized, wordJSONError(err))
	}
	var out []Message
	var walk func(any, int)
	walk = func(v any, depth int) {
		if depth > 64 {
			return
		}
		switch t := v.(type) {
		case map[string]any:
			for _, k := range []string{"msg", "message", "MESSAGE", "error", "err", "note", "text"} {
				if s, ok := t[k].(string); ok && s != "" && Classify(s).Failed() {
					out = append(out, Message{Source: "text", Text: s, Count: 1})
				}
			}
			for k, c := range t {
				switch c.(type) {
				case map[string]any, []any:
					_ = k
					walk(c, depth+1)
				}
			}
		case []any:
			for _, c := range t {
				walk(c, depth+1)
			}
		case string:
			if Classify(t).Failed() {
				out = append(out, Message{Source: "text", Text: t, Count: 1})
			}
		}
	}
	walk(v, 0)
	if len(out) == 0 {
		return nil, fmt.Errorf("parsing JSON: %w: not a Kubernetes Event, Pod or List, and no pull failure text in it", ErrUnrecognized)
	}
	return out, nil
}

// fromObject turns one object (or List) into messages. known reports
// whether the object was an Event, Pod or List of them.
func fromObject(o k8sObject, depth int) (known bool, out []Message) {
	if depth > 4 {
		return false, nil
	}
	switch {
	case strings.HasSuffix(o.Kind, "List") || o.Kind == "" && o.Items != nil:
		for _, it := range o.Items {
			k, msgs := fromObject(it, depth+1)
			known = known || k
			out = append(out, msgs...)
		}
		return known || o.Kind != "", out
	case o.Kind == "Event" || o.Kind == "" && (o.Reason != "" || o.InvolvedObject.Name != "" || o.Regarding.Name != ""):
		m := Message{Source: "event", Reason: o.Reason, Text: o.Message, Count: o.Count}
		if m.Text == "" {
			m.Text = o.Note
		}
		ref := o.InvolvedObject
		if ref.Name == "" {
			ref = o.Regarding
		}
		m.Object = objectName(ref.Kind, ref.Namespace, ref.Name, containerOf(ref.FieldPath))
		if o.Series != nil && o.Series.Count > m.Count {
			m.Count = o.Series.Count
		}
		if m.Count == 0 {
			m.Count = o.DeprecatedCount
		}
		if m.Count < 1 {
			m.Count = 1
		}
		m.First, m.Last = o.FirstTimestamp, o.LastTimestamp
		if m.First.IsZero() {
			m.First = o.EventTime
		}
		if m.Last.IsZero() {
			m.Last = m.First
			if o.Series != nil && !o.Series.LastObservedTime.IsZero() {
				m.Last = o.Series.LastObservedTime
			}
		}
		if m.Text != "" {
			out = append(out, m)
		}
		return true, out
	case o.Kind == "Pod":
		var st k8sPodStatus
		if len(o.Status) > 0 {
			if err := json.Unmarshal(o.Status, &st); err != nil {
				return true, nil
			}
		}
		images := map[string]string{}
		for _, c := range append(append(append([]k8sContainer{}, o.Spec.InitContainers...), o.Spec.Containers...), o.Spec.EphemeralContainers...) {
			images[c.Name] = c.Image
		}
		for _, cs := range append(append(append([]k8sContainerStatus{}, st.InitContainerStatuses...), st.ContainerStatuses...), st.EphemeralContainerStatuses...) {
			w := cs.State.Waiting
			if w == nil || !isPullWaitingReason(w.Reason) {
				continue
			}
			img := images[cs.Name]
			if img == "" {
				img = cs.Image
			}
			text := w.Message
			if text == "" {
				text = w.Reason
			}
			out = append(out, Message{Source: "waiting", Reason: w.Reason, Text: text, Count: 1, Image: img,
				Object: objectName("Pod", o.Metadata.Namespace, o.Metadata.Name, cs.Name)})
		}
		return true, out
	}
	return false, nil
}

// isPullWaitingReason reports whether a container waiting reason is about
// pulling its image.
func isPullWaitingReason(r string) bool {
	switch r {
	case "ErrImagePull", "ImagePullBackOff", "ErrImageNeverPull", "InvalidImageName", "ImageInspectError",
		"RegistryUnavailable", "SignatureValidationFailed", "PullImageError":
		return true
	}
	return false
}

// containerOf extracts the container name from an event's fieldPath
// (spec.containers{app}).
func containerOf(fieldPath string) string {
	i := strings.IndexByte(fieldPath, '{')
	j := strings.LastIndexByte(fieldPath, '}')
	if i >= 0 && j > i {
		return fieldPath[i+1 : j]
	}
	return ""
}

func objectName(kind, ns, name, container string) string {
	if name == "" {
		return ""
	}
	k := strings.ToLower(kind)
	if k == "" {
		k = "pod"
	}
	parts := []string{k}
	if ns != "" {
		parts = append(parts, ns)
	}
	parts = append(parts, name)
	if container != "" {
		parts = append(parts, container)
	}
	return strings.Join(parts, "/")
}

// looksYAMLObject reports whether b is a YAML Kubernetes object: a line
// starting with "kind:" or "apiVersion:" near the top.
func looksYAMLObject(b []byte) bool {
	head := b
	if len(head) > 8<<10 {
		head = head[:8<<10]
	}
	for _, line := range bytes.Split(head, []byte("\n")) {
		line = bytes.TrimRight(line, "\r")
		if bytes.HasPrefix(line, []byte("apiVersion:")) || bytes.HasPrefix(line, []byte("kind:")) || bytes.HasPrefix(line, []byte("items:")) {
			return true
		}
	}
	return false
}

// parseYAML reads one or more YAML documents of Kubernetes objects.
func parseYAML(b []byte) ([]Message, error) {
	var out []Message
	docs := splitYAMLDocs(b)
	known := false
	for i, d := range docs {
		if len(bytes.TrimSpace(d)) == 0 {
			continue
		}
		j, err := yaml.YAMLToJSON(d)
		if err != nil {
			return out, fmt.Errorf("parsing YAML document %d: %w: %v", i+1, ErrUnrecognized, err)
		}
		var o k8sObject
		if err := json.Unmarshal(j, &o); err != nil {
			return out, fmt.Errorf("parsing YAML document %d: %w: %v", i+1, ErrUnrecognized, wordJSONError(err))
		}
		k, msgs := fromObject(o, 0)
		known = known || k
		out = append(out, msgs...)
	}
	if !known {
		return out, fmt.Errorf("parsing YAML: %w: not a Kubernetes Event, Pod or List", ErrUnrecognized)
	}
	return out, nil
}

func splitYAMLDocs(b []byte) [][]byte {
	var docs [][]byte
	start := 0
	for i := 0; i < len(b); {
		j := bytes.IndexByte(b[i:], '\n')
		end := len(b)
		if j >= 0 {
			end = i + j
		}
		line := bytes.TrimRight(b[i:end], "\r ")
		if bytes.Equal(line, []byte("---")) {
			docs = append(docs, b[start:i])
			start = end + 1
			if start > len(b) {
				start = len(b)
			}
		}
		i = end + 1
	}
	docs = append(docs, b[start:])
	return docs
}

// looksDescribe reports whether s is `kubectl describe pod` output.
func looksDescribe(b []byte) bool {
	s := string(b)
	return (strings.HasPrefix(s, "Name:") || strings.Contains(s, "\nName:")) &&
		(strings.Contains(s, "\nEvents:") || strings.Contains(s, "\nContainers:") || strings.Contains(s, "\nNamespace:"))
}

// parseDescribe reads `kubectl describe pod` output: each container's
// Image and State: Waiting Reason/Message, and the Events table. Several
// pods in one output are separated by their Name: lines.
func parseDescribe(s string) []Message {
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	var out []Message
	var pod, ns, container, image string
	inEvents := false
	var msgCol, reasonCol, ageCol, fromCol int
	var waitingReason, waitingMsg string
	flushWaiting := func() {
		if waitingReason != "" && isPullWaitingReason(waitingReason) {
			text := waitingMsg
			if text == "" {
				text = waitingReason
			}
			out = append(out, Message{Source: "waiting", Reason: waitingReason, Text: text, Count: 1, Image: image,
				Object: objectName("Pod", ns, pod, container)})
		}
		waitingReason, waitingMsg = "", ""
	}
	for i := 0; i < len(lines); i++ {
		line := strings.TrimRight(lines[i], " \t")
		if line == "" {
			continue
		}
		if !strings.HasPrefix(line, " ") && !strings.HasPrefix(line, "\t") {
			// A top-level field.
			key, val, _ := strings.Cut(line, ":")
			val = strings.TrimSpace(val)
			switch key {
			case "Name":
				flushWaiting()
				pod, inEvents, container, image = val, false, "", ""
			case "Namespace":
				ns = val
			case "Events":
				flushWaiting()
				inEvents = val == ""
				msgCol = -1
			default:
				flushWaiting()
				inEvents = false
			}
			continue
		}
		if inEvents {
			t := strings.TrimSpace(line)
			if msgCol < 0 {
				if strings.HasPrefix(t, "Type") && strings.Contains(line, "Message") {
					msgCol = strings.Index(line, "Message")
					reasonCol = strings.Index(line, "Reason")
					ageCol = strings.Index(line, "Age")
					fromCol = strings.Index(line, "From")
				}
				continue
			}
			if strings.HasPrefix(t, "----") {
				continue
			}
			m, ok := describeEventRow(line, msgCol, reasonCol, ageCol, fromCol)
			if !ok {
				// A wrapped continuation of the previous message.
				if len(out) > 0 && out[len(out)-1].Source == "describe" {
					out[len(out)-1].Text += " " + t
				}
				continue
			}
			m.Object = objectName("Pod", ns, pod, "")
			out = append(out, m)
			continue
		}
		// Container sections: "  app:" then "    Image:", "    State: Waiting",
		// "      Reason: ...", "      Message: ...".
		t := strings.TrimSpace(line)
		indent := len(line) - len(strings.TrimLeft(line, " \t"))
		key, val, _ := strings.Cut(t, ":")
		val = strings.TrimSpace(val)
		switch {
		case indent <= 2 && val == "" && strings.HasSuffix(t, ":") && !strings.Contains(key, " "):
			flushWaiting()
			container, image = key, ""
		case key == "Image":
			image = val
		case key == "State":
			flushWaiting()
			if val == "Waiting" {
				waitingReason = "?"
			}
		case key == "Last State", key == "Ready", key == "Restart Count", key == "Environment", key == "Mounts", key == "Port", key == "Host Port":
			flushWaiting()
		case key == "Reason" && waitingReason != "":
			waitingReason = val
		case key == "Message" && waitingReason != "":
			waitingMsg = val
			// Long messages continue on more-indented lines.
			for i+1 < len(lines) {
				next := lines[i+1]
				nIndent := len(next) - len(strings.TrimLeft(next, " \t"))
				nt := strings.TrimSpace(next)
				if nt == "" || nIndent <= indent || strings.Contains(nt, ":\t") {
					break
				}
				waitingMsg += " " + nt
				i++
			}
		}
	}
	flushWaiting()
	return out
}

// describeEventRow reads one row of the Events table by the header's
// columns: Type, Reason, Age, From, Message.
func describeEventRow(line string, msgCol, reasonCol, ageCol, fromCol int) (Message, bool) {
	t := strings.TrimSpace(line)
	typ, _, _ := strings.Cut(t, " ")
	if typ != "Normal" && typ != "Warning" {
		return Message{}, false
	}
	m := Message{Source: "describe", Count: 1}
	if msgCol > 0 && msgCol < len(line) && line[msgCol-1] == ' ' {
		m.Text = strings.TrimSpace(line[msgCol:])
		if reasonCol > 0 && ageCol > reasonCol && ageCol <= len(line) {
			m.Reason = strings.TrimSpace(line[reasonCol:ageCol])
		}
		if ageCol > 0 && fromCol > ageCol && fromCol <= len(line) {
			m.Count = ageCount(strings.TrimSpace(line[ageCol:fromCol]))
		}
	} else {
		// Columns not aligned (pasted through a proportional font or
		// re-wrapped): split on runs of two or more spaces.
		f := splitColumns(t)
		if len(f) >= 5 {
			m.Reason, m.Count, m.Text = f[1], ageCount(f[2]), strings.Join(f[4:], "  ")
		} else if len(f) == 4 {
			m.Reason, m.Text = f[1], f[3]
		} else {
			return Message{}, false
		}
	}
	if m.Text == "" {
		return Message{}, false
	}
	return m, true
}

// ageCount reads the count from an Age column like "2m (x4 over 5m)".
func ageCount(age string) int {
	i := strings.Index(age, "(x")
	if i < 0 {
		return 1
	}
	rest := age[i+2:]
	j := 0
	for j < len(rest) && isDigit(rest[j]) {
		j++
	}
	n, err := strconv.Atoi(rest[:j])
	if err != nil || n < 1 {
		return 1
	}
	return n
}

// splitColumns splits a table row on runs of two or more spaces.
func splitColumns(t string) []string {
	var out []string
	for t != "" {
		i := strings.Index(t, "  ")
		if i < 0 {
			out = append(out, t)
			break
		}
		out = append(out, t[:i])
		t = strings.TrimLeft(t[i:], " ")
	}
	return out
}

// parseText reads plain text: one message per line. A line that continues
// the previous one (indented, or a registry error line after an
// errors.Join newline) is joined to it. A `kubectl get events` table is
// read by its MESSAGE column.
func parseText(s string) []Message {
	var out []Message
	p := newTextParser(func(m Message) { out = append(out, m) })
	var n int64
	for s != "" {
		line := s
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			line, s = s[:i], s[i+1:]
		} else {
			s = ""
		}
		n++
		p.line(n, line)
	}
	p.flush()
	return out
}

// isContinuation reports whether line continues the previous message.
func isContinuation(line, prev string) bool {
	if strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t") {
		return true
	}
	p := strings.TrimRight(prev, " ")
	if strings.HasSuffix(p, ":") || strings.HasSuffix(p, "\\") || strings.HasSuffix(p, ",") {
		return true
	}
	l := lowerASCII(strings.TrimSpace(line))
	for _, pre := range []string{"unauthorized:", "denied:", "toomanyrequests:", "manifest unknown", "name unknown",
		"blob unknown", "unsupported:", "forbidden:", "not found:", "name invalid", "manifest invalid"} {
		if strings.HasPrefix(l, pre) {
			return true
		}
	}
	return false
}
