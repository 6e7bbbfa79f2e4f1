package uctest

import (
	"encoding/json"
	"strings"
)

// uniformIceberg is DeltaUniformMetadata.iceberg.
type uniformIceberg struct {
	MetadataLocation     *string `json:"metadata-location"`
	ConvertedVersion     *int64  `json:"converted-delta-version"`
	ConvertedTimestampMs *int64  `json:"converted-delta-timestamp"`
	BaseConvertedVersion *int64  `json:"base-converted-delta-version"`
}

func icebergEnabled(props map[string]string) bool {
	for _, f := range strings.Split(props["delta.universalFormat.enabledFormats"], ",") {
		if f == "iceberg" {
			return true
		}
	}
	return false
}

// checkUniformConsistency: the uniform block is present exactly when the
// properties enable Iceberg.
func checkUniformConsistency(props map[string]string, present bool) *apiError {
	on := icebergEnabled(props)
	if on && !present {
		return invalid("Uniform metadata must be set when 'delta.universalFormat.enabledFormats' includes 'iceberg'.")
	}
	if !on && present {
		return invalid("Uniform metadata must not be set unless 'delta.universalFormat.enabledFormats' includes 'iceberg'.")
	}
	return nil
}

// parseUniform reads and shape-checks a uniform block (nil when absent).
func parseUniform(u map[string]any) (*uniformIceberg, *apiError) {
	if u == nil {
		return nil, nil
	}
	raw, ok := u["iceberg"]
	if !ok || raw == nil {
		return nil, invalid("Field cannot be null in uniform: iceberg")
	}
	b, _ := json.Marshal(raw)
	var ice uniformIceberg
	if err := json.Unmarshal(b, &ice); err != nil {
		return nil, invalid("Invalid uniform.iceberg: %v", err)
	}
	switch {
	case ice.MetadataLocation == nil:
		return nil, invalid("uniform.iceberg.metadata-location is required when uniform is set.")
	case ice.ConvertedVersion == nil:
		return nil, invalid("uniform.iceberg.converted-delta-version is required when uniform is set.")
	case ice.ConvertedTimestampMs == nil:
		return nil, invalid("uniform.iceberg.converted-delta-timestamp is required when uniform is set.")
	}
	return &ice, nil
}

// checkUniformCreate adds the create-time rules.
func checkUniformCreate(ice *uniformIceberg, tableLocation string) *apiError {
	if ice == nil {
		return nil
	}
	if v := *ice.ConvertedVersion; v != 0 && v != 1 {
		return invalid("uniform.iceberg.converted-delta-version must be 0 or 1 at create time, got %d.", v)
	}
	if ice.BaseConvertedVersion != nil {
		return invalid("uniform.iceberg.base-converted-delta-version must not be set at create time: the table has no prior converted-delta-version for it to reference.")
	}
	ml := normalizeLocation(*ice.MetadataLocation)
	if !strings.HasPrefix(ml, tableLocation+"/") {
		return invalid("uniform.iceberg.metadata-location ('%s') must be a subpath of the table location ('%s').", ml, tableLocation)
	}
	return nil
}

// storedUniform is what loadTable shows for a table's UniForm state.
func storedUniform(ice *uniformIceberg) map[string]any {
	return map[string]any{"iceberg": map[string]any{
		"metadata-location":         normalizeLocation(*ice.MetadataLocation),
		"converted-delta-version":   *ice.ConvertedVersion,
		"converted-delta-timestamp": *ice.ConvertedTimestampMs,
	}}
}
