package fields

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// WriteText prints the report for people.
func WriteText(w io.Writer, r *Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "VirtualMachine %s  (list mode: %s, from %s)\n", r.VM, r.Mode, r.ModeSource)
	for _, m := range r.Managers {
		tag := ""
		if m.Bridge {
			tag = "  [bridge]"
		}
		fmt.Fprintf(&b, "\n%s%s  (%s)\n", m.Name, tag, strings.Join(m.Operations, ", "))
		for _, p := range m.Paths {
			fmt.Fprintf(&b, "  %s\n", p)
		}
	}
	writeObjects(&b, r.Objects)
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "\nnote: %s\n", n)
	}
	if len(r.Deviations) == 0 {
		b.WriteString("\nno deviations from the ownership table (apply/doc.go)\n")
	} else {
		fmt.Fprintf(&b, "\nDEVIATIONS (%d):\n", len(r.Deviations))
		for _, d := range r.Deviations {
			fmt.Fprintf(&b, "  %-7s  %s owns %s: %s\n", d.Kind, d.Manager, d.Path, d.Detail)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteJSON prints the report as indented JSON.
func WriteJSON(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// writeObjects prints the objects the bridge made for the VM, each with its
// managers ("manager Operation[/subresource]").
func writeObjects(b *strings.Builder, objs []Object) {
	if objs == nil {
		return
	}
	if len(objs) == 0 {
		b.WriteString("\nobjects of the bridge's: none\n")
		return
	}
	fmt.Fprintf(b, "\nobjects of the bridge's (%d):\n", len(objs))
	for _, o := range objs {
		ms := make([]string, len(o.Managers))
		for i, m := range o.Managers {
			ms[i] = m.Name + " " + m.Operation
			if m.Subresource != "" {
				ms[i] += "/" + m.Subresource
			}
		}
		fmt.Fprintf(b, "  %s %s  (%s)  %s\n", o.Kind, o.Name, o.Role, strings.Join(ms, ", "))
	}
}
