package lab

// Listing is one scenario as `pullpath demo --list` prints it, known
// without starting the lab.
type Listing struct {
	Name        string `json:"scenario"`
	Description string `json:"description"`
	Expect      Expect `json:"expected"`
}

// List returns every scenario's name, description and expected verdict, in
// the order the lab serves them, without starting anything. Endpoints in
// the expectations use port 443, the lab's default.
func List() []Listing {
	l := &Lab{HTTPSPort: 443}
	specs := l.scenarioSpecs()
	out := make([]Listing, 0, len(specs))
	for _, s := range specs {
		out = append(out, Listing{Name: s.name, Description: s.description, Expect: s.expect})
	}
	return out
}
