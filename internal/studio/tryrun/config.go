package tryrun

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/connectd/connectd/internal/studio/catalog"
	"github.com/connectd/connectd/internal/studio/graph"
	"github.com/connectd/connectd/internal/studio/yamlsrc"
	"github.com/connectd/connectd/internal/table"
)

// tapLabel labels the capture output in the child's config.
const tapLabel = "studio_tap"

// plan is what a run of a pipeline needs: the config the child runs, the
// topics the development broker creates, and the brokers the file names.
type plan struct {
	config []byte
	// topics are the static topics of kafka_source and kafka_sink, created
	// up front on the development broker (a kafka_source ends the run on
	// a topic that does not exist).
	topics []string
	// brokers are the configured brokers, environment expanded.
	brokers []string
	// kafka says whether the pipeline has a kafka_source or kafka_sink:
	// without one no development broker is started.
	kafka bool
}

// planInput is what a plan is made from.
type planInput struct {
	src []byte
	env catalog.Env
	// devBroker is the development broker's address; "" runs against the
	// configured brokers.
	devBroker string
	// tapFile receives the first maxMessages output messages as JSON
	// lines; metricsAddr is the child's HTTP address.
	tapFile     string
	maxMessages int
	metricsAddr string
	// copyDir receives the rewritten copies of catalog files.
	copyDir string
}

// errNoOutput is a config the tap cannot be put in front of.
var errNoOutput = errors.New("the pipeline has no output: nothing to capture")

// makePlan parses the pipeline and writes the child's config: the tap
// around the output, the HTTP server on metricsAddr with the prometheus
// exporter, and with a development broker every broker address replaced
// by it.
func makePlan(in planInput) (*plan, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(in.src, &doc); err != nil {
		return nil, fmt.Errorf("the pipeline is not valid YAML: %w", err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, errors.New("the pipeline is not a YAML mapping (input, pipeline, output)")
	}
	root := doc.Content[0]
	g := graph.Build(in.src, in.env)
	p := &plan{}
	for _, n := range g.Nodes {
		k := n.Kafka
		if k == nil || (n.Component != "kafka_source" && n.Component != "kafka_sink") {
			continue
		}
		p.kafka = true
		for _, b := range k.SeedBrokers {
			if !slices.Contains(p.brokers, b) {
				p.brokers = append(p.brokers, b)
			}
		}
		for _, t := range append(slices.Clone(k.Topics), k.Topic) {
			if t != "" && !strings.Contains(t, "${!") && !slices.Contains(p.topics, t) {
				p.topics = append(p.topics, t)
			}
		}
	}
	if in.devBroker != "" {
		if err := useDevBroker(root, in); err != nil {
			return nil, err
		}
	}
	if err := tapOutput(root, in.tapFile, in.maxMessages); err != nil {
		return nil, err
	}
	set(root, "http", mapping("enabled", scalar("true", "!!bool"), "address", scalar(in.metricsAddr, "!!str")))
	if _, m := yamlsrc.Get(root, "metrics"); m == nil || len(m.Content) == 0 || m.Content[0].Value != "prometheus" {
		set(root, "metrics", mapping("prometheus", mapping()))
	}
	out, err := yaml.Marshal(&doc)
	if err != nil {
		return nil, fmt.Errorf("writing the run's config: %w", err)
	}
	p.config = out
	return p, nil
}

// connectionFields are the connection settings of a real cluster that the
// development broker (plain TCP, no login) does not take.
var connectionFields = []string{"tls", "sasl", "tls_truststore", "tls_keystore"}

// useDevBroker points every Kafka component at the development broker:
// seed_brokers, and the tables' properties.bootstrap.servers (inline ddl,
// YAML table, or a copy of the catalog file).
func useDevBroker(root *yaml.Node, in planInput) error {
	var errs []error
	catalog.Walk(root, func(path, component string, key, conf *yaml.Node) {
		if component != "kafka_source" && component != "kafka_sink" {
			return
		}
		for _, f := range connectionFields {
			remove(conf, f)
		}
		if k, v := yamlsrc.Get(conf, table.FieldDDL); k != nil && v.Kind == yaml.ScalarNode {
			v.Value = replaceSQLBootstrap(v.Value, in.devBroker)
		}
		if _, t := yamlsrc.Get(conf, table.FieldTable); t != nil && t.Kind == yaml.MappingNode {
			if _, opts := yamlsrc.Get(t, "options"); opts != nil && opts.Kind == yaml.MappingNode {
				if k, v := yamlsrc.Get(opts, "properties.bootstrap.servers"); k != nil {
					v.Value, v.Tag, v.Style = in.devBroker, "!!str", 0
				}
			}
		}
		if k, v := yamlsrc.Get(conf, table.FieldCatalog); k != nil && v.Kind == yaml.ScalarNode {
			copied, err := copyCatalog(v.Value, in)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s.%s.catalog: %w", path, component, err))
				return
			}
			v.Value = copied
		}
		set(conf, "seed_brokers", sequence(scalar(in.devBroker, "!!str")))
	})
	return errors.Join(errs...)
}

var (
	sqlBootstrap  = regexp.MustCompile(`('properties\.bootstrap\.servers'\s*=\s*)'(?:[^']|'')*'`)
	yamlBootstrap = regexp.MustCompile(`(?m)^(\s*["']?properties\.bootstrap\.servers["']?\s*:\s*).*$`)
)

func replaceSQLBootstrap(ddl, addr string) string {
	return sqlBootstrap.ReplaceAllString(ddl, "${1}'"+addr+"'")
}

// copyCatalog writes a copy of the catalog file path (as written in the
// config) into in.copyDir with its bootstrap servers replaced, and returns
// the copy's path. Copies of one file are shared.
func copyCatalog(path string, in planInput) (string, error) {
	src := yamlsrc.ExpandEnv(path, in.env.LookupEnv)
	if !filepath.IsAbs(src) && in.env.Dir != "" {
		src = filepath.Join(in.env.Dir, src)
	}
	data, err := os.ReadFile(src)
	if err != nil {
		return "", err
	}
	text := string(data)
	switch strings.ToLower(filepath.Ext(src)) {
	case ".sql":
		text = replaceSQLBootstrap(text, in.devBroker)
	default:
		text = yamlBootstrap.ReplaceAllString(text, "${1}"+strconv.Quote(in.devBroker))
	}
	// Named after the whole path, so that two catalogs of one name in
	// different directories do not overwrite each other.
	abs, err := filepath.Abs(src)
	if err != nil {
		return "", err
	}
	dst := filepath.Join(in.copyDir, strings.NewReplacer("/", "_", "\\", "_", ":", "_").Replace(abs))
	if err := os.WriteFile(dst, []byte(text), 0o600); err != nil {
		return "", err
	}
	return dst, nil
}

// tapOutput wraps the output in a fan_out broker whose second output writes
// the first max messages as JSON lines {"content", "metadata"} to file.
func tapOutput(root *yaml.Node, file string, max int) error {
	_, out := yamlsrc.Get(root, "output")
	if out == nil || out.Kind != yaml.MappingNode || len(out.Content) == 0 {
		return errNoOutput
	}
	original := *out
	tap := mapping(
		"label", scalar(tapLabel, "!!str"),
		"file", mapping("path", scalar(file, "!!str"), "codec", scalar("lines", "!!str")),
		"processors", sequence(mapping("mapping", scalar(fmt.Sprintf(
			"root = if counter() > %d { deleted() } else { {\"content\": content().string(), \"metadata\": metadata()} }", max), "!!str"))),
	)
	set(root, "output", mapping("broker", mapping(
		"pattern", scalar("fan_out", "!!str"),
		"outputs", sequence(&original, tap),
	)))
	return nil
}

func scalar(v, tag string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Value: v, Tag: tag}
}

func sequence(items ...*yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Content: items}
}

// mapping builds a mapping from key, value pairs.
func mapping(kv ...any) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for i := 0; i+1 < len(kv); i += 2 {
		m.Content = append(m.Content, scalar(kv[i].(string), "!!str"), kv[i+1].(*yaml.Node))
	}
	return m
}

// set sets key in the mapping m to val, replacing an existing value.
func set(m *yaml.Node, key string, val *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = val
			return
		}
	}
	m.Content = append(m.Content, scalar(key, "!!str"), val)
}

// remove deletes key from the mapping m.
func remove(m *yaml.Node, key string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = append(m.Content[:i], m.Content[i+2:]...)
			return
		}
	}
}
