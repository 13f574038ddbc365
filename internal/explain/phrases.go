package explain

import (
	"strings"
	"sync"
)

// The classifier asks a few hundred "does the text contain this phrase"
// questions per message. Instead of one substring scan per phrase, every
// phrase is registered once and an Aho–Corasick automaton finds all of
// them in one linear pass over the lowercased text; the predicates then
// test bits. The sets are declared at package initialisation (newSet only
// records them) and numbered, with the automaton, at the first scan, so
// that a command that explains nothing (every start of the node binary)
// does not pay for it.

var (
	phraseSets []*phraseSet // every set, in declaration order
	phraseList []string
	phraseIDs  map[string]int
	automaton  *acMachine
	buildOnce  sync.Once
)

// phraseSet is a set of registered phrases, as a bitset over phrase IDs
// (filled by build).
type phraseSet struct {
	phrases []string
	bits    []uint64
}

// newSet declares a set of phrases (lowercase). It must only be called
// during package initialisation.
func newSet(phrases ...string) *phraseSet {
	s := &phraseSet{phrases: phrases}
	phraseSets = append(phraseSets, s)
	return s
}

// build numbers every declared phrase, fills the sets' bits and compiles
// the automaton, once.
func build() {
	buildOnce.Do(func() {
		phraseIDs = map[string]int{}
		for _, s := range phraseSets {
			for _, p := range s.phrases {
				id, ok := phraseIDs[p]
				if !ok {
					id = len(phraseList)
					phraseIDs[p] = id
					phraseList = append(phraseList, p)
				}
				for len(s.bits) <= id/64 {
					s.bits = append(s.bits, 0)
				}
				s.bits[id/64] |= 1 << (id % 64)
			}
		}
		automaton = buildAC(phraseList)
	})
}

// maxPhraseWords bounds the phrase IDs: hits is a fixed array, so that a
// scan allocates nothing. buildAC panics (at the first scan, during
// package use) if more phrases are registered than it holds.
const maxPhraseWords = 16

// hits is the set of registered phrases found in one text.
type hits struct {
	bits [maxPhraseWords]uint64
}

// any reports whether the text contains any phrase of s.
func (h hits) any(s *phraseSet) bool {
	n := len(s.bits)
	if n > maxPhraseWords {
		n = maxPhraseWords
	}
	for i := 0; i < n; i++ {
		if h.bits[i]&s.bits[i] != 0 {
			return true
		}
	}
	return false
}

// scanPhrases finds every registered phrase in l (already lowercase).
func scanPhrases(l string) hits {
	build()
	return automaton.scan(l)
}

// acMachine is an Aho–Corasick automaton compiled to a dense DFA over a
// compressed alphabet (the bytes that occur in phrases; every other byte
// is class 0 and matches nothing).
type acMachine struct {
	class  [256]uint8
	nclass int
	// next maps row+class to the next state's row, where a state's row is
	// state*nclass: the scan adds instead of multiplying per byte.
	next []int32
	// out lists the phrase IDs that end in each state, flat: the IDs of
	// the state whose row is r are ids[outStart[r/nclass]:outStart[r/nclass+1]].
	// hasOut is indexed by row, so the common case (no phrase ends here)
	// costs one load.
	hasOut   []bool
	outStart []int32
	ids      []int32
	phrases  int
}

func buildAC(phrases []string) *acMachine {
	if len(phrases) > maxPhraseWords*64 {
		panic("explain: more registered phrases than maxPhraseWords holds")
	}
	m := &acMachine{phrases: len(phrases)}
	// Alphabet.
	n := 1
	for _, p := range phrases {
		for i := 0; i < len(p); i++ {
			if m.class[p[i]] == 0 {
				m.class[p[i]] = uint8(n)
				n++
			}
		}
	}
	m.nclass = n
	// Trie.
	type node struct {
		child map[uint8]int32
		fail  int32
		out   []int32
	}
	nodes := []node{{child: map[uint8]int32{}}}
	for id, p := range phrases {
		s := int32(0)
		for i := 0; i < len(p); i++ {
			c := m.class[p[i]]
			nx, ok := nodes[s].child[c]
			if !ok {
				nx = int32(len(nodes))
				nodes = append(nodes, node{child: map[uint8]int32{}})
				nodes[s].child[c] = nx
			}
			s = nx
		}
		nodes[s].out = append(nodes[s].out, int32(id))
	}
	// Failure links (BFS) and the dense transition table.
	m.next = make([]int32, len(nodes)*n)
	queue := make([]int32, 0, len(nodes))
	for c := 1; c < n; c++ {
		if nx, ok := nodes[0].child[uint8(c)]; ok {
			nodes[nx].fail = 0
			m.next[c] = nx
			queue = append(queue, nx)
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		f := nodes[s].fail
		nodes[s].out = append(nodes[s].out, nodes[f].out...)
		for c := 1; c < n; c++ {
			if nx, ok := nodes[s].child[uint8(c)]; ok {
				nodes[nx].fail = m.next[int(f)*n+c]
				m.next[int(s)*n+c] = nx
				queue = append(queue, nx)
			} else {
				m.next[int(s)*n+c] = m.next[int(f)*n+c]
			}
		}
	}
	// Rows instead of states in the table.
	for i := range m.next {
		m.next[i] *= int32(n)
	}
	m.hasOut = make([]bool, len(nodes)*n)
	m.outStart = make([]int32, len(nodes)+1)
	for i := range nodes {
		m.outStart[i] = int32(len(m.ids))
		m.ids = append(m.ids, nodes[i].out...)
		if len(nodes[i].out) > 0 {
			m.hasOut[i*n] = true
		}
	}
	m.outStart[len(nodes)] = int32(len(m.ids))
	return m
}

func (m *acMachine) scan(l string) hits {
	var h hits
	row := int32(0)
	n := int32(m.nclass)
	next, hasOut := m.next, m.hasOut
	for i := 0; i < len(l); i++ {
		c := m.class[l[i]]
		if c == 0 {
			row = 0
			continue
		}
		row = next[row+int32(c)]
		if hasOut[row] {
			st := row / n
			for _, id := range m.ids[m.outStart[st]:m.outStart[st+1]] {
				h.bits[id/64] |= 1 << (id % 64)
			}
		}
	}
	return h
}

// has reports whether t contains phrase p: a bit test when p is
// registered, a substring search otherwise.
func (t *txt) has(p string) bool {
	build()
	if id, ok := phraseIDs[p]; ok {
		return t.h.bits[id/64]&(1<<(id%64)) != 0
	}
	return strings.Contains(t.l, p)
}
