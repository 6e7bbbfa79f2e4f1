package catalog

import (
	"fmt"
	"strings"
)

// TableName is a table's three-level name, catalog.schema.table, in every
// catalog kind (a Hive Metastore's database is the schema).
type TableName struct {
	Catalog, Schema, Table string
}

// String returns the full name "catalog.schema.table".
func (n TableName) String() string { return n.Catalog + "." + n.Schema + "." + n.Table }

// ParseTableName splits "catalog.schema.table" into its three parts. Every
// part must be non-empty. Names that themselves contain dots are not supported.
func ParseTableName(full string) (TableName, error) {
	parts := strings.Split(full, ".")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return TableName{}, fmt.Errorf("catalog: invalid table name %q: want catalog.schema.table", full)
	}
	return TableName{Catalog: parts[0], Schema: parts[1], Table: parts[2]}, nil
}
