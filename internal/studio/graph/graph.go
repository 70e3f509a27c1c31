// Package graph is the studio's pipeline graph: the editor's YAML as nodes
// and edges (input → buffer → processors → output), brokers, switches,
// fallbacks, sequences and the processor containers expanded, resources
// linked from each `resource: name`, each node with its range in the YAML
// so that a click jumps to it. Kafka nodes carry what a Flink user looks
// for (topics, group, assignment, delivery guarantee, table, watermark),
// and a kafka_source whose offsets an exactly-once kafka_sink commits in its
// transactions (internal/txnoffsets) is linked by an edge of its own kind.
//
// The JSON is internal/studio/API.md's `POST /api/graph`.
package graph

import (
	"fmt"
	"strconv"

	"gopkg.in/yaml.v3"

	"github.com/connectd/connectd/internal/studio/catalog"
	"github.com/connectd/connectd/internal/studio/yamlsrc"
)

// Sections of a config.
const (
	SectionInput              = "input"
	SectionBuffer             = "buffer"
	SectionPipeline           = "pipeline"
	SectionOutput             = "output"
	SectionInputResources     = "input_resources"
	SectionProcessorResources = "processor_resources"
	SectionOutputResources    = "output_resources"
)

// Edge kinds.
const (
	EdgeFlow        = "flow"
	EdgeResource    = "resource"
	EdgeExactlyOnce = "exactly_once"
)

// Node is a component of the pipeline.
type Node struct {
	ID        string        `json:"id"`
	Section   string        `json:"section"`
	Component string        `json:"component"`
	Label     string        `json:"label"`
	Path      string        `json:"path"`
	Parent    string        `json:"parent,omitempty"`
	Range     yamlsrc.Range `json:"range"`
	Kafka     *Kafka        `json:"kafka,omitempty"`
}

// Edge links two nodes.
type Edge struct {
	From  string `json:"from"`
	To    string `json:"to"`
	Kind  string `json:"kind"`
	Label string `json:"label,omitempty"`
}

// Graph is the pipeline as nodes and edges.
type Graph struct {
	Nodes  []*Node           `json:"nodes"`
	Edges  []Edge            `json:"edges"`
	Errors []yamlsrc.Problem `json:"errors"`
}

// Node returns the node with the given id, nil if there is none.
func (g *Graph) Node(id string) *Node {
	for _, n := range g.Nodes {
		if n.ID == id {
			return n
		}
	}
	return nil
}

// Build returns the graph of the pipeline src. YAML that does not parse
// gives the graph of the lines before the error, and the error.
func Build(src []byte, env catalog.Env) *Graph {
	g := &Graph{Nodes: []*Node{}, Edges: []Edge{}, Errors: []yamlsrc.Problem{}}
	root, problems := yamlsrc.Parse(src)
	g.Errors = append(g.Errors, problems...)
	if root == nil {
		return g
	}
	b := &builder{
		s: yamlsrc.NewSource(src), g: g, env: env,
		resources: map[string]map[string]string{},
	}
	// Resources first, so that references find them whatever the order.
	b.resourceSection(root, SectionInputResources, b.input)
	b.resourceSection(root, SectionProcessorResources, func(m *yaml.Node, path, section, parent string) []string {
		_, exits := b.processor(m, path, section, parent)
		return exits
	})
	b.resourceSection(root, SectionOutputResources, func(m *yaml.Node, path, section, parent string) []string {
		return b.output(m, path, section, parent)
	})

	var exits []string
	if _, in := yamlsrc.Get(root, SectionInput); in != nil {
		exits = b.input(in, SectionInput, SectionInput, "")
	}
	if _, buf := yamlsrc.Get(root, SectionBuffer); buf != nil {
		if n := b.add(buf, SectionBuffer, SectionBuffer, ""); n != nil {
			b.flow(exits, n.ID, "")
			exits = []string{n.ID}
		}
	}
	if _, pl := yamlsrc.Get(root, SectionPipeline); pl != nil {
		if _, procs := yamlsrc.Get(pl, "processors"); procs != nil {
			exits = b.processors(procs, "pipeline.processors", SectionPipeline, "", exits, "")
		}
	}
	if _, out := yamlsrc.Get(root, SectionOutput); out != nil {
		for _, e := range b.output(out, SectionOutput, SectionOutput, "") {
			b.flow(exits, e, "")
		}
	}
	b.linkResources()
	b.pairExactlyOnce()
	return g
}

type builder struct {
	s   *yamlsrc.Source
	g   *Graph
	env catalog.Env
	// resources maps a resource section's kind (input, processor,
	// output) and label to the node id.
	resources map[string]map[string]string
	refs      []ref
}

// ref is a `resource: name` node waiting for its resource.
type ref struct {
	node *Node
	kind string
	name string
	at   *yaml.Node
}

// componentOf returns the component key and config of a component
// mapping (`{label: x, kafka_source: {...}, processors: [...]}`).
func componentOf(m *yaml.Node) (key, val *yaml.Node, label string) {
	m = yamlsrc.Resolve(m)
	if m == nil || m.Kind != yaml.MappingNode {
		return nil, nil, ""
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		switch k := m.Content[i]; k.Value {
		case "label":
			label = m.Content[i+1].Value
		case "processors":
		default:
			if key == nil {
				key, val = k, yamlsrc.Resolve(m.Content[i+1])
			}
		}
	}
	return key, val, label
}

// add adds the node of the component mapping m at path; nil when m holds
// no component.
func (b *builder) add(m *yaml.Node, path, section, parent string) *Node {
	key, val, label := componentOf(m)
	if key == nil {
		return nil
	}
	n := &Node{
		ID: path, Section: section, Component: key.Value, Label: key.Value,
		Path: path, Parent: parent, Range: b.s.Range(key, val),
	}
	if label != "" {
		n.Label = key.Value + " " + strconv.Quote(label)
	}
	if key.Value == "resource" {
		n.Label = "resource " + strconv.Quote(val.Value)
	}
	n.Kafka = b.kafka(n, section, val)
	b.g.Nodes = append(b.g.Nodes, n)
	return n
}

func (b *builder) flow(from []string, to, label string) {
	for _, f := range from {
		b.g.Edges = append(b.g.Edges, Edge{From: f, To: to, Kind: EdgeFlow, Label: label})
	}
}

// resourceKind is the kind of resource a section's `resource` refers to.
func resourceKind(section string) string {
	switch section {
	case SectionInput, SectionInputResources:
		return "input"
	case SectionOutput, SectionOutputResources:
		return "output"
	}
	return "processor"
}

// reference records a `resource: name` node.
func (b *builder) reference(n *Node, kind string, val *yaml.Node) {
	b.refs = append(b.refs, ref{node: n, kind: kind, name: val.Value, at: val})
}

// input adds the input component mapping m and its children, and returns
// the ids messages leave it from (its last processor, or itself).
func (b *builder) input(m *yaml.Node, path, section, parent string) []string {
	n := b.add(m, path, section, parent)
	if n == nil {
		return nil
	}
	_, val, _ := componentOf(m)
	base := path + "." + n.Component
	switch n.Component {
	case "broker", "sequence":
		_, children := yamlsrc.Get(val, "inputs")
		for i, c := range items(children) {
			b.flow(b.input(c, fmt.Sprintf("%s.inputs.%d", base, i), section, n.ID), n.ID, "")
		}
	case "read_until":
		if _, c := yamlsrc.Get(val, "input"); c != nil {
			b.flow(b.input(c, base+".input", section, n.ID), n.ID, "")
		}
	case "resource":
		b.reference(n, resourceKind(section), val)
	}
	exits := []string{n.ID}
	if _, procs := yamlsrc.Get(m, "processors"); procs != nil {
		exits = b.processors(procs, path+".processors", section, parent, exits, "")
	}
	return exits
}

// processors chains the processor list seq after prev and returns the ids
// messages leave it from; label marks the first link (a switch case).
func (b *builder) processors(seq *yaml.Node, path, section, parent string, prev []string, label string) []string {
	for i, p := range items(seq) {
		entries, exits := b.processor(p, fmt.Sprintf("%s.%d", path, i), section, parent)
		for _, e := range entries {
			b.flow(prev, e, label)
		}
		if len(entries) > 0 {
			prev, label = exits, ""
		}
	}
	return prev
}

// processorLists are the fields of processor containers that hold a list
// of processors run on (a part of) the messages.
var processorLists = []string{"processors", "request_map_processors", "result_map_processors"}

// processor adds the processor component mapping m and its children.
func (b *builder) processor(m *yaml.Node, path, section, parent string) (entries, exits []string) {
	n := b.add(m, path, section, parent)
	if n == nil {
		return nil, nil
	}
	_, val, _ := componentOf(m)
	base := path + "." + n.Component
	entries, exits = []string{n.ID}, []string{n.ID}
	switch {
	case n.Component == "resource":
		b.reference(n, "processor", val)
	case n.Component == "switch" || n.Component == "group_by":
		// Cases: each its own branch; a message no case takes goes on.
		for i, c := range items(val) {
			_, procs := yamlsrc.Get(c, "processors")
			exits = append(exits, b.processors(procs, fmt.Sprintf("%s.%d.processors", base, i), section, n.ID, []string{n.ID}, yamlsrc.String(c, "check"))...)
		}
		exits = dedupe(exits)
	case val != nil && val.Kind == yaml.SequenceNode:
		// try, catch, for_each, parallel, processors, ...: one chain.
		chain := b.processors(val, base, section, n.ID, []string{n.ID}, "")
		exits = chain
		if n.Component == "catch" {
			exits = dedupe(append([]string{n.ID}, chain...))
		}
	case val != nil && val.Kind == yaml.MappingNode:
		// while, retry, branch, cached, workflow branches ...: their
		// processor lists, chained in the order written.
		prev := []string{n.ID}
		for _, field := range processorLists {
			if _, procs := yamlsrc.Get(val, field); procs != nil && procs.Kind == yaml.SequenceNode {
				prev = b.processors(procs, base+"."+field, section, n.ID, prev, "")
			}
		}
		if _, branches := yamlsrc.Get(val, "branches"); branches != nil && branches.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(branches.Content); i += 2 {
				name, br := branches.Content[i].Value, yamlsrc.Resolve(branches.Content[i+1])
				chain := []string{n.ID}
				for _, field := range processorLists {
					if _, procs := yamlsrc.Get(br, field); procs != nil && procs.Kind == yaml.SequenceNode {
						chain = b.processors(procs, base+".branches."+name+"."+field, section, n.ID, chain, name)
					}
				}
				prev = append(prev, chain...)
			}
			prev = dedupe(prev)
		}
		exits = prev
	}
	return entries, exits
}

// output adds the output component mapping m and its children, and
// returns the ids messages enter it at (its first processor, or itself).
func (b *builder) output(m *yaml.Node, path, section, parent string) []string {
	n := b.add(m, path, section, parent)
	if n == nil {
		return nil
	}
	_, val, _ := componentOf(m)
	base := path + "." + n.Component
	switch n.Component {
	case "broker":
		_, children := yamlsrc.Get(val, "outputs")
		pattern := yamlsrc.String(val, "pattern")
		for i, c := range items(children) {
			for _, e := range b.output(c, fmt.Sprintf("%s.outputs.%d", base, i), section, n.ID) {
				b.flow([]string{n.ID}, e, pattern)
			}
		}
	case "switch":
		_, cases := yamlsrc.Get(val, "cases")
		for i, c := range items(cases) {
			_, o := yamlsrc.Get(c, "output")
			if o == nil {
				continue
			}
			label := yamlsrc.String(c, "check")
			if label == "" {
				label = "otherwise"
			}
			for _, e := range b.output(o, fmt.Sprintf("%s.cases.%d.output", base, i), section, n.ID) {
				b.flow([]string{n.ID}, e, label)
			}
		}
	case "fallback", "try":
		for i, c := range items(val) {
			label := "primary"
			if i > 0 {
				label = fmt.Sprintf("fallback %d", i)
			}
			for _, e := range b.output(c, fmt.Sprintf("%s.%d", base, i), section, n.ID) {
				b.flow([]string{n.ID}, e, label)
			}
		}
	case "resource":
		b.reference(n, "output", val)
	}
	if _, procs := yamlsrc.Get(m, "processors"); procs != nil && len(procs.Content) > 0 {
		// Output processors run before the output: the chain ends in it.
		var first []string
		var prev []string
		for i, p := range items(procs) {
			entries, exits := b.processor(p, fmt.Sprintf("%s.processors.%d", path, i), section, parent)
			if first == nil {
				first = entries
			}
			for _, e := range entries {
				b.flow(prev, e, "")
			}
			if len(entries) > 0 {
				prev = exits
			}
		}
		b.flow(prev, n.ID, "")
		if first != nil {
			return first
		}
	}
	return []string{n.ID}
}

// resourceSection adds the resources of a section (a list of labelled
// components) and records their labels.
func (b *builder) resourceSection(root *yaml.Node, section string, add func(m *yaml.Node, path, section, parent string) []string) {
	_, seq := yamlsrc.Get(root, section)
	kind := resourceKind(section)
	for i, m := range items(seq) {
		path := fmt.Sprintf("%s.%d", section, i)
		add(m, path, section, "")
		_, _, label := componentOf(m)
		if label == "" {
			continue
		}
		if b.resources[kind] == nil {
			b.resources[kind] = map[string]string{}
		}
		b.resources[kind][label] = path
	}
}

// linkResources links each `resource: name` to its resource, and reports
// a name no resource has.
func (b *builder) linkResources() {
	for _, r := range b.refs {
		id, ok := b.resources[r.kind][r.name]
		if !ok {
			b.g.Errors = append(b.g.Errors, yamlsrc.Problem{
				Message: fmt.Sprintf("resource %q: no %s resource has this label (%s_resources)", r.name, r.kind, r.kind),
				Path:    r.node.Path + ".resource", Line: r.at.Line, Col: r.at.Column,
			})
			continue
		}
		b.g.Edges = append(b.g.Edges, Edge{From: r.node.ID, To: id, Kind: EdgeResource, Label: r.name})
	}
}

// items returns the entries of a sequence, aliases resolved.
func items(seq *yaml.Node) []*yaml.Node {
	seq = yamlsrc.Resolve(seq)
	if seq == nil || seq.Kind != yaml.SequenceNode {
		return nil
	}
	out := make([]*yaml.Node, len(seq.Content))
	for i, c := range seq.Content {
		out[i] = yamlsrc.Resolve(c)
	}
	return out
}

func dedupe(ids []string) []string {
	seen := map[string]bool{}
	out := ids[:0:0]
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}
