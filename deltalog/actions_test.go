package deltalog

import (
	"errors"
	"strings"
	"testing"
)

func TestParseActionsLines(t *testing.T) {
	proto := `{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}`
	add := `{"add":{"path":"a b\"}{.parquet","partitionValues":{"p":"x]"},"size":1,"stats":"{\"numRecords\":1}"}}`
	tests := []struct {
		name     string
		in       string
		line     int // 0 = no error
		protocol bool
	}{
		{"protocol and add", proto + "\n" + add + "\n", 0, true},
		{"blank lines and CRLF", "\r\n" + add + "\r\n\n" + proto, 0, true},
		{"add with spaces", `{ "add" : {"path":"x"} }`, 0, false},
		{"truncated add", proto + "\n" + add[:len(add)-3], 2, false},
		{"truncated inside string", add[:30], 1, false},
		{"trailing garbage after add", add + "}", 1, false},
		{"trailing garbage after protocol", proto + "x", 1, false},
		{"not an object", "[1]", 1, false},
		{"bad protocol type", `{"protocol":{"minReaderVersion":"one"}}`, 1, false},
		{"escaped key is decoded", `{"\u0061dd":{"path":"x"}}`, 0, false},
		{"null actions", `{"protocol":null,"metaData":null}`, 0, false},
		{"null add", `{"add":null}`, 0, false},
		{"add of the wrong type", proto + "\n" + `{"add":"x"}`, 2, false},
		{"remove of the wrong type", `{"remove" : 5}`, 1, false},
		{"cdc array", `{"cdc":[{"path":"x"}]}`, 1, false},
		{"txn number", add + "\n" + `{"txn":1}`, 2, false},
		{"metaData of the wrong type", `{"metaData":[1]}`, 1, false},
		{"commitInfo of the wrong type", `{"commitInfo":"x"}`, 1, false},
		{"protocol of the wrong type", `{"protocol":"x"}`, 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fa, err := parseActions([]byte(tt.in))
			if tt.line == 0 {
				if err != nil {
					t.Fatalf("err = %v", err)
				}
				if (fa.protocol != nil) != tt.protocol {
					t.Errorf("protocol found = %v, want %v", fa.protocol != nil, tt.protocol)
				}
				return
			}
			var le *lineError
			if !errors.As(err, &le) || le.Line != tt.line || !errors.Is(err, ErrCorrupt) {
				t.Errorf("err = %v, want ErrCorrupt at line %d", err, tt.line)
			}
		})
	}
}

func TestParseSchemaDepthLimit(t *testing.T) {
	deep := `{"type":"struct","fields":[{"name":"a","type":` + strings.Repeat(`{"type":"array","elementType":`, 300) + `"long"` +
		strings.Repeat(`,"containsNull":true}`, 300) + `,"nullable":true,"metadata":{}}]}`
	if _, err := ParseSchema(deep); err == nil || !strings.Contains(err.Error(), "levels deep") {
		t.Errorf("err = %v, want a depth error", err)
	}
	ok := `{"type":"struct","fields":[{"name":"a","type":` + strings.Repeat(`{"type":"array","elementType":`, 50) + `"long"` +
		strings.Repeat(`,"containsNull":true}`, 50) + `,"nullable":true,"metadata":{}}]}`
	if _, err := ParseSchema(ok); err != nil {
		t.Errorf("50 levels: %v", err)
	}
}
