package deltalog

import (
	"fmt"

	"github.com/parquet-go/parquet-go"
)

// This file assembles protocol, metaData and domainMetadata actions from
// the leaf columns of a Parquet checkpoint (see readParquetActions).

// nodeDef is the definition level at which c is present, given the level
// at which its parent is present.
func nodeDef(parentDef int, c *parquet.Column) int {
	if c.Required() {
		return parentDef
	}
	return parentDef + 1
}

// firstLeaf descends through first children down to a leaf (the element
// of a LIST whatever its group names are).
func firstLeaf(c *parquet.Column) *parquet.Column {
	for c != nil && !c.Leaf() {
		kids := c.Columns()
		if len(kids) == 0 {
			return nil
		}
		c = kids[0]
	}
	return c
}

// mapLeaves returns the key and value leaves of a MAP column, whatever the
// repeated group is called (key_value, map, entries).
func mapLeaves(m *parquet.Column) (key, value *parquet.Column) {
	if m == nil || m.Leaf() || len(m.Columns()) != 1 {
		return nil, nil
	}
	kv := m.Columns()[0]
	if kv.Leaf() {
		return nil, nil
	}
	key, value = kv.Column("key"), kv.Column("value")
	if key == nil && value == nil && len(kv.Columns()) == 2 {
		key, value = kv.Columns()[0], kv.Columns()[1]
	}
	if key == nil || value == nil || !key.Leaf() || !value.Leaf() {
		return nil, nil
	}
	return key, value
}

// child returns the named child of c, or nil.
func child(c *parquet.Column, name string) *parquet.Column {
	if c == nil || c.Leaf() {
		return nil
	}
	return c.Column(name)
}

// findRows returns the rows of rg (at most limit; limit <= 0: all) where
// the non-repeated key leaf has a value: the rows holding the action.
func findRows(gd *pageGuard, rg parquet.RowGroup, key *parquet.Column, limit int) ([]int64, error) {
	fc, err := chunkOf(rg, key)
	if err != nil {
		return nil, err
	}
	if key.MaxRepetitionLevel() != 0 {
		return nil, fmt.Errorf("%w: %s is repeated", errNoLeaf, key.Name())
	}
	return presentRows(gd, key, fc, key.MaxDefinitionLevel(), limit)
}

// readLeaves reads each leaf at rows (nil leaves stay nil).
func readLeaves(gd *pageGuard, rg parquet.RowGroup, rows []int64, leaves ...*parquet.Column) ([]*column, error) {
	out := make([]*column, len(leaves))
	for i, l := range leaves {
		c, err := readLeafRows(gd, rg, l, rows)
		if err != nil {
			return nil, err
		}
		out[i] = c
	}
	return out, nil
}

// optStr, optInt and optList turn an absent value into an untyped nil so
// rawObject skips it.
func optStr(s string, ok bool) any {
	if !ok {
		return nil
	}
	return s
}

func optInt(n int64, ok bool) any {
	if !ok {
		return nil
	}
	return n
}

func optList(l []string, ok bool) any {
	if !ok {
		return nil
	}
	return l
}

func optMap(m map[string]string, ok bool) any {
	if !ok {
		return nil
	}
	return m
}

// readProtocolRows sets fa.protocol from the first protocol row in rg.
func readProtocolRows(gd *pageGuard, f *parquet.File, rgIndex int, rg parquet.RowGroup, p *parquet.Column, fa *fileActions) error {
	minR := child(p, "minReaderVersion")
	if minR == nil || !minR.Leaf() {
		return fmt.Errorf("%w: protocol.minReaderVersion", errNoLeaf)
	}
	if allNull(f, rgIndex, minR) {
		return nil
	}
	rows, err := findRows(gd, rg, minR, 1)
	if err != nil || len(rows) == 0 {
		return err
	}
	structDef := nodeDef(0, p)
	rf, wf := child(p, "readerFeatures"), child(p, "writerFeatures")
	cols, err := readLeaves(gd, rg, rows, minR, child(p, "minWriterVersion"), firstLeaf(rf), firstLeaf(wf))
	if err != nil {
		return err
	}
	for i, vals := range cols[0].rows {
		if len(vals) == 0 || vals[0].DefinitionLevel() < structDef {
			continue
		}
		r, rok := cols[0].integer(i)
		w, wok := cols[1].integer(i)
		var readerF, writerF []string
		var rfok, wfok bool
		if rf != nil {
			readerF, rfok = cols[2].strings(i, nodeDef(structDef, rf))
		}
		if wf != nil {
			writerF, wfok = cols[3].strings(i, nodeDef(structDef, wf))
		}
		fa.protocol = &Protocol{MinReaderVersion: int(r), MinWriterVersion: int(w), ReaderFeatures: readerF, WriterFeatures: writerF}
		if err := checkProtocolText(fa.protocol); err != nil {
			return fmt.Errorf("%w: %v", ErrCorrupt, err)
		}
		var o rawObject
		o.add("minReaderVersion", optInt(r, rok))
		o.add("minWriterVersion", optInt(w, wok))
		o.add("readerFeatures", optList(readerF, rfok))
		o.add("writerFeatures", optList(writerF, wfok))
		fa.rawProtocol = o.bytes()
		return nil
	}
	return nil
}

// readMetadataRows sets fa.metadata from the first metaData row in rg.
func readMetadataRows(gd *pageGuard, f *parquet.File, rgIndex int, rg parquet.RowGroup, m *parquet.Column, fa *fileActions) error {
	id := child(m, "id")
	if id == nil || !id.Leaf() {
		return fmt.Errorf("%w: metaData.id", errNoLeaf)
	}
	if allNull(f, rgIndex, id) {
		return nil
	}
	rows, err := findRows(gd, rg, id, 1)
	if err != nil || len(rows) == 0 {
		return err
	}
	structDef := nodeDef(0, m)
	format := child(m, "format")
	pc, conf, opts := child(m, "partitionColumns"), child(m, "configuration"), child(format, "options")
	confK, confV := mapLeaves(conf)
	optK, optV := mapLeaves(opts)
	cols, err := readLeaves(gd, rg, rows, id, child(m, "name"), child(m, "description"), child(format, "provider"),
		child(m, "schemaString"), firstLeaf(pc), confK, confV, optK, optV, child(m, "createdTime"))
	if err != nil {
		return err
	}
	for i, vals := range cols[0].rows {
		if len(vals) == 0 || vals[0].DefinitionLevel() < structDef {
			continue
		}
		md := Metadata{}
		idv, idok := cols[0].str(i)
		name, nameok := cols[1].str(i)
		desc, descok := cols[2].str(i)
		prov, provok := cols[3].str(i)
		schema, schemaok := cols[4].str(i)
		var parts []string
		var partsok, confok, optsok bool
		if pc != nil {
			parts, partsok = cols[5].strings(i, nodeDef(structDef, pc))
		}
		var config, options map[string]string
		if confK != nil {
			config, confok = entries(cols[6], cols[7], i, nodeDef(structDef, conf))
		}
		formatDef := 0
		if format != nil {
			formatDef = nodeDef(structDef, format)
		}
		if optK != nil {
			options, optsok = entries(cols[8], cols[9], i, nodeDef(formatDef, opts))
		}
		created, createdok := cols[10].integer(i)
		md.ID, md.Name, md.Description, md.SchemaString = idv, name, desc, schema
		md.Format = Format{Provider: prov, Options: options}
		md.PartitionColumns, md.Configuration = parts, config
		if createdok {
			md.CreatedTime = &created
		}
		normalizeMetadata(&md)
		if err := checkMetadataText(&md); err != nil {
			return fmt.Errorf("%w: %v", ErrCorrupt, err)
		}
		var fo rawObject
		fo.add("provider", optStr(prov, provok))
		fo.add("options", optMap(options, optsok))
		var o rawObject
		o.add("id", optStr(idv, idok))
		o.add("name", optStr(name, nameok))
		o.add("description", optStr(desc, descok))
		o.add("format", fo.bytes())
		o.add("schemaString", optStr(schema, schemaok))
		o.add("partitionColumns", optList(parts, partsok))
		o.add("configuration", optMap(config, confok))
		o.add("createdTime", optInt(created, createdok))
		fa.metadata, fa.rawMetadata = &md, o.bytes()
		return nil
	}
	return nil
}

// readDomainRows appends every domainMetadata row in rg to fa.domains.
func readDomainRows(gd *pageGuard, f *parquet.File, rgIndex int, rg parquet.RowGroup, d *parquet.Column, fa *fileActions) error {
	dom := child(d, "domain")
	if dom == nil || !dom.Leaf() {
		return fmt.Errorf("%w: domainMetadata.domain", errNoLeaf)
	}
	if allNull(f, rgIndex, dom) {
		return nil
	}
	rows, err := findRows(gd, rg, dom, 0)
	if err != nil || len(rows) == 0 {
		return err
	}
	cols, err := readLeaves(gd, rg, rows, dom, child(d, "configuration"), child(d, "removed"))
	if err != nil {
		return err
	}
	for i := range cols[0].rows {
		name, ok := cols[0].str(i)
		if !ok {
			continue
		}
		conf, _ := cols[1].str(i)
		removed, _ := cols[2].boolean(i)
		d := domainAction{Domain: name, Configuration: conf, Removed: removed}
		if err := checkDomainText(&d); err != nil {
			return fmt.Errorf("%w: %v", ErrCorrupt, err)
		}
		fa.domains = append(fa.domains, d)
	}
	return nil
}
