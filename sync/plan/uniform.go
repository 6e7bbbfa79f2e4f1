package plan

import (
	"fmt"
	"strings"

	"github.com/deltasync/deltasync/catalog"
)

// UniformDrift says the catalog's Iceberg pointer does not describe the
// log's latest version.
type UniformDrift struct {
	LogVersion int64 `json:"log_version"`
	// ConvertedVersion is the pointer's converted-delta-version; nil when
	// the catalog holds no pointer.
	ConvertedVersion *int64 `json:"converted_delta_version"`
	MetadataLocation string `json:"metadata_location,omitempty"`
	// Why says what Iceberg readers see and what the catalog can take.
	Why string `json:"why"`
}

// logEnablesIceberg reports delta.universalFormat.enabledFormats holding
// iceberg.
func logEnablesIceberg(conf map[string]string) bool {
	v := conf["delta.universalFormat.enabledFormats"]
	if v == "" {
		return false
	}
	for _, f := range strings.Split(v, ",") {
		if strings.EqualFold(strings.TrimSpace(f), "iceberg") {
			return true
		}
	}
	return false
}

// diffUniform compares an EXTERNAL record's Iceberg pointer with the log.
func diffUniform(log *LogState, rec *Record) *UniformDrift {
	if strings.EqualFold(rec.Type, catalog.TableTypeManaged) {
		return nil // a MANAGED table's committer sends the pointer with each commit
	}
	ptr := rec.Iceberg
	has := ptr != nil && ptr.ConvertedVersion != nil
	const cannot = "the Delta API takes an EXTERNAL table's Iceberg pointer only at create " +
		"(updateTable has no action for it; delta-io/delta#4922), so deltasync never writes it: " +
		"register the table again with its current Iceberg metadata location to refresh it"
	switch {
	case !has && logEnablesIceberg(log.Configuration):
		return &UniformDrift{LogVersion: log.Version, Why: "the log enables UniForm Iceberg " +
			"(delta.universalFormat.enabledFormats) but the catalog holds no Iceberg pointer: Iceberg " +
			"readers through Unity Catalog cannot read this table; " + cannot}
	case has && *ptr.ConvertedVersion < log.Version:
		c := *ptr.ConvertedVersion
		return &UniformDrift{LogVersion: log.Version, ConvertedVersion: &c, MetadataLocation: ptr.MetadataLocation,
			Why: fmt.Sprintf("the catalog's Iceberg pointer was converted at version %d, the log is at %d: "+
				"Iceberg readers through Unity Catalog see version %d; %s", c, log.Version, c, cannot)}
	}
	return nil
}
