package main

import (
	"fmt"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// helmValue is one documented value of the Helm chart.
type helmValue struct {
	Path, Type, Default, Doc string
}

// helmValues reads the chart's values.yaml the way helm-docs does: a key's
// comment (the lines right above it) is its documentation. A mapping with
// a comment is one value (its whole default shown); one without is
// documented key by key. The file's opening comment block, separated by a
// blank line, documents the file, not its first key.
func helmValues(valuesYAML []byte) ([]helmValue, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(valuesYAML, &doc); err != nil {
		return nil, fmt.Errorf("values.yaml: %w", err)
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("values.yaml: want a mapping at the top")
	}
	var out []helmValue
	if err := walkHelm(doc.Content[0], "", &out); err != nil {
		return nil, err
	}
	return out, nil
}

func walkHelm(m *yaml.Node, prefix string, out *[]helmValue) error {
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		path := join(prefix, k.Value)
		comment := helmComment(k.HeadComment)
		if v.Kind == yaml.MappingNode && len(v.Content) > 0 && comment == "" {
			if err := walkHelm(v, path, out); err != nil {
				return err
			}
			continue
		}
		def, err := helmDefault(v)
		if err != nil {
			return fmt.Errorf("values.yaml %s: %w", path, err)
		}
		*out = append(*out, helmValue{Path: path, Type: helmType(v), Default: def, Doc: comment})
	}
	return nil
}

// helmComment joins a head comment's lines into one paragraph, keeping the
// last block (a blank line separates a file or section comment from the
// key's own).
func helmComment(c string) string {
	blocks := strings.Split(c, "\n\n")
	var lines []string
	for _, l := range strings.Split(blocks[len(blocks)-1], "\n") {
		l = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "#"))
		if l != "" {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, " ")
}

func helmType(v *yaml.Node) string {
	switch v.Kind {
	case yaml.MappingNode:
		return "object"
	case yaml.SequenceNode:
		return "list"
	}
	switch v.Tag {
	case "!!int":
		return "int"
	case "!!bool":
		return "bool"
	case "!!float":
		return "float"
	}
	return "string"
}

// helmDefault renders a value's default as one line of YAML (flow style
// for a mapping or list).
func helmDefault(v *yaml.Node) (string, error) {
	if v.Kind == yaml.ScalarNode {
		if v.Tag == "!!str" {
			return fmt.Sprintf("%q", v.Value), nil
		}
		return v.Value, nil
	}
	c := *v
	setFlow(&c)
	b, err := yaml.Marshal(&c)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// setFlow copies n's tree into flow style without comments.
func setFlow(n *yaml.Node) {
	n.Style = yaml.FlowStyle
	if n.Kind == yaml.ScalarNode {
		n.Style = 0
	}
	n.HeadComment, n.LineComment, n.FootComment = "", "", ""
	kids := make([]*yaml.Node, len(n.Content))
	for i, k := range n.Content {
		c := *k
		setFlow(&c)
		kids[i] = &c
	}
	n.Content = kids
}

// helmReference renders docs/reference/helm-values.md.
func helmReference(valuesYAML []byte) (string, error) {
	vs, err := helmValues(valuesYAML)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(generatedHeader)
	b.WriteString("# Helm chart values\n\nEvery value of `deploy/helm/deltasync`, generated from the comments in its\n" +
		"[values.yaml](../../deploy/helm/deltasync/values.yaml) (helm-docs style). How to install the chart and\n" +
		"which combinations are tested: [Helm](../deploying/helm.md).\n\n" +
		"| value | type | default | meaning |\n|---|---|---|---|\n")
	for _, v := range vs {
		fmt.Fprintf(&b, "| `%s` | %s | `%s` | %s |\n", v.Path, v.Type, strings.ReplaceAll(v.Default, "|", `\|`), strings.ReplaceAll(v.Doc, "|", `\|`))
	}
	return b.String(), nil
}
