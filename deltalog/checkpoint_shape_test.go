package deltalog

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// badKeyRow puts a group where protocol.minReaderVersion must be a leaf.
type badKeyRow struct {
	Protocol *struct {
		MinReaderVersion *struct {
			X *int32 `parquet:"x,optional"`
		} `parquet:"minReaderVersion,optional"`
	} `parquet:"protocol,optional"`
}

// repeatedKeyRow makes metaData.id a repeated leaf.
type repeatedKeyRow struct {
	MetaData *struct {
		ID []string `parquet:"id,list"`
	} `parquet:"metaData,optional"`
}

// TestCheckpointColumnShapesAreCorrupt: a checkpoint whose protocol or
// metaData key column has a shape the protocol does not allow is refused
// as ErrCorrupt (not an unclassified error a caller would retry), naming
// the column. Found by FuzzCheckpointRows in CI.
func TestCheckpointColumnShapesAreCorrupt(t *testing.T) {
	one := int32(1)
	cases := map[string]struct {
		data []byte
		want string
	}{
		"group key": {parquetBytes(t, []badKeyRow{{Protocol: &struct {
			MinReaderVersion *struct {
				X *int32 `parquet:"x,optional"`
			} `parquet:"minReaderVersion,optional"`
		}{MinReaderVersion: &struct {
			X *int32 `parquet:"x,optional"`
		}{X: &one}}}}), "protocol.minReaderVersion"},
		"repeated key": {parquetBytes(t, []repeatedKeyRow{{MetaData: &struct {
			ID []string `parquet:"id,list"`
		}{ID: []string{"a", "b"}}}}), "metaData"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := readParquetActions(bytes.NewReader(tc.data), int64(len(tc.data)), false)
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not name %s", err, tc.want)
			}
		})
	}
}

func parquetBytes[T any](t *testing.T, rows []T) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[T](&buf)
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
