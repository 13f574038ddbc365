package report

import "github.com/pullpath/pullpath/internal/verdict"

// Path is one more drawn path of a page, with its own verdict and table:
// one node pool's private path to the registry (azure), or one pool's pull
// path as its agents report it (monitor status).
type Path struct {
	Name   string // the pool's name (data-path)
	Title  string
	Status string // HopOK, HopFailed, HopWarning or HopNotReached: the path as a whole
	Hops   []Hop
	// Verdict is shown beside the path; nil shows none.
	Verdict *verdict.Verdict
	// Lines are sentences under the verdict (the setting, the agreement
	// with the data plane).
	Lines []string
	// Table holds the path's findings, e.g. one row per check.
	Table *Table
}

// Comparison is two paths of the same node drawn one above the other: the
// runtime's (the node's) and an ordinary pod's (diagnose --pod-view), hop
// by hop in the same order, the first hop where they differ marked
// Parting in both rows.
type Comparison struct {
	Name       string // the node (data-compare)
	Title      string
	Divergence string // ok, same, node-fails, pods-fail, ...
	Parting    string // the parting hop's Kind, "" when none
	Node, Pod  []Hop
	// Lines are sentences under the drawing (the consequence).
	Lines []string
}

// Failing reports whether a hop of the path is marked failing.
func (p *Path) Failing() bool {
	for _, h := range p.Hops {
		if h.Failing {
			return true
		}
	}
	return false
}

// Table is a table of a page: a title, a header and rows.
type Table struct {
	ID     string
	Title  string
	Header []string
	Rows   []Row
}

// Row is one row of a Table. Key names it (data-row); Status (HopOK,
// HopFailed, HopWarning, HopNotReached or empty) colours it; Failing marks
// the row a failure is read from.
type Row struct {
	Key     string
	Status  string
	Failing bool
	Cells   []Cell
}

// Cell is one cell of a Row; Class is a CSS class of the page (ok, failed,
// mono).
type Cell struct {
	Text  string
	Class string
}

// TextCells makes plain cells of texts.
func TextCells(texts ...string) []Cell {
	out := make([]Cell, len(texts))
	for i, t := range texts {
		out[i] = Cell{Text: t}
	}
	return out
}

// Heading is the command the page reports on, for its title line.
func (p *Page) Heading() string {
	switch p.Kind {
	case KindDiagnoseReport:
		return "pullpath diagnose"
	case KindAzureReport:
		return "pullpath azure"
	case KindMonitorStatus:
		return "pullpath monitor status"
	}
	return "pullpath probe"
}
