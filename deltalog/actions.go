package deltalog

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Protocol is the protocol action, in the log's own JSON shape.
type Protocol struct {
	MinReaderVersion int      `json:"minReaderVersion"`
	MinWriterVersion int      `json:"minWriterVersion"`
	ReaderFeatures   []string `json:"readerFeatures,omitempty"`
	WriterFeatures   []string `json:"writerFeatures,omitempty"`
}

// Format is metaData.format: the data file format and its options.
type Format struct {
	Provider string            `json:"provider"`
	Options  map[string]string `json:"options"`
}

// Metadata is the metaData action, in the log's own JSON shape.
type Metadata struct {
	ID               string            `json:"id"`
	Name             string            `json:"name,omitempty"`
	Description      string            `json:"description,omitempty"`
	Format           Format            `json:"format"`
	SchemaString     string            `json:"schemaString"`
	PartitionColumns []string          `json:"partitionColumns"`
	Configuration    map[string]string `json:"configuration"`
	CreatedTime      *int64            `json:"createdTime,omitempty"`
}

// domainAction is a domainMetadata action.
type domainAction struct {
	Domain        string `json:"domain"`
	Configuration string `json:"configuration"`
	Removed       bool   `json:"removed"`
}

// fileActions are the actions of one log file that deltalog cares about.
// add, remove and every other action are skipped without being decoded.
type fileActions struct {
	protocol    *Protocol
	rawProtocol json.RawMessage // the action exactly as written
	metadata    *Metadata
	rawMetadata json.RawMessage
	timestamp   *int64 // commitInfo.timestamp
	ict         *int64 // commitInfo.inCommitTimestamp
	domains     []domainAction
}

// actionLine is the shape one JSON line is decoded into.
type actionLine struct {
	Protocol       json.RawMessage `json:"protocol"`
	MetaData       json.RawMessage `json:"metaData"`
	CommitInfo     json.RawMessage `json:"commitInfo"`
	DomainMetadata json.RawMessage `json:"domainMetadata"`
}

// lineError is a parse failure at a 1-based line of a JSON log file.
type lineError struct {
	Line int
	Err  error
}

func (e *lineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }
func (e *lineError) Unwrap() error { return e.Err }

// parseLines parses newline-delimited JSON actions (a commit, staged
// commit, compaction or v2 JSON checkpoint). Blank lines are skipped.
// When a file holds several actions of one kind, the last one wins. A
// malformed line returns a *lineError wrapping ErrCorrupt. Without
// wantCommitInfo, commitInfo lines are skipped like add lines (checked for
// balanced brackets only), since replay uses the commit info of the newest
// file alone.
func parseLines(data []byte, wantCommitInfo bool) (*fileActions, error) {
	fa := &fileActions{}
	line := 0
	for len(data) > 0 {
		line++
		var text []byte
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			text, data = data[:i], data[i+1:]
		} else {
			text, data = data, nil
		}
		text = bytes.TrimSpace(text)
		if len(text) == 0 {
			continue
		}
		if err := fa.addLine(text, wantCommitInfo); err != nil {
			return nil, &lineError{Line: line, Err: fmt.Errorf("%w: %v", ErrCorrupt, err)}
		}
	}
	return fa, nil
}

// skipped reports whether an action line whose first key is key is one
// deltalog does not need. Those lines, by far the most of a commit, are
// only checked for balanced brackets (which catches truncation) instead
// of being decoded.
func skipped(key []byte, wantCommitInfo bool) bool {
	switch string(key) {
	case "add", "remove", "cdc", "txn", "sidecar", "checkpointMetadata":
		return true
	case "commitInfo":
		return !wantCommitInfo
	}
	return false
}

// addLine decodes one action line into fa.
func (fa *fileActions) addLine(text []byte, wantCommitInfo bool) error {
	if text[0] != '{' {
		return fmt.Errorf("not a JSON object")
	}
	if key := firstKey(text); skipped(key, wantCommitInfo) {
		if !balanced(text) {
			return fmt.Errorf("unbalanced JSON object (truncated line?)")
		}
		if !objectValue(text, key) {
			return fmt.Errorf("%s: action is not a JSON object", key)
		}
		return nil
	}
	var l actionLine
	if err := json.Unmarshal(text, &l); err != nil {
		return err
	}
	if present(l.Protocol) {
		if err := checkRawText("protocol", l.Protocol); err != nil {
			return err
		}
		var p Protocol
		if err := json.Unmarshal(l.Protocol, &p); err != nil {
			return fmt.Errorf("protocol: %v", err)
		}
		fa.protocol, fa.rawProtocol = &p, l.Protocol
	}
	if present(l.MetaData) {
		if err := checkRawText("metaData", l.MetaData); err != nil {
			return err
		}
		var m Metadata
		if err := json.Unmarshal(l.MetaData, &m); err != nil {
			return fmt.Errorf("metaData: %v", err)
		}
		if err := checkText("metaData.schemaString", m.SchemaString, true); err != nil {
			return err
		}
		normalizeMetadata(&m)
		fa.metadata, fa.rawMetadata = &m, l.MetaData
	}
	if present(l.CommitInfo) {
		var ci struct {
			Timestamp         *int64 `json:"timestamp"`
			InCommitTimestamp *int64 `json:"inCommitTimestamp"`
		}
		if err := json.Unmarshal(l.CommitInfo, &ci); err != nil {
			return fmt.Errorf("commitInfo: %v", err)
		}
		fa.timestamp, fa.ict = ci.Timestamp, ci.InCommitTimestamp
	}
	if present(l.DomainMetadata) {
		if err := checkRawText("domainMetadata", l.DomainMetadata); err != nil {
			return err
		}
		var d domainAction
		if err := json.Unmarshal(l.DomainMetadata, &d); err != nil {
			return fmt.Errorf("domainMetadata: %v", err)
		}
		if err := checkDomainText(&d); err != nil {
			return err
		}
		fa.domains = append(fa.domains, d)
	}
	return nil
}

// present reports whether a raw field was given and is not null.
func present(raw json.RawMessage) bool {
	return len(raw) > 0 && !bytes.Equal(raw, []byte("null"))
}

// normalizeMetadata replaces nil collections by empty ones, so a Metadata
// marshals with [] and {} as the log writes them.
func normalizeMetadata(m *Metadata) {
	if m.PartitionColumns == nil {
		m.PartitionColumns = []string{}
	}
	if m.Configuration == nil {
		m.Configuration = map[string]string{}
	}
	if m.Format.Options == nil {
		m.Format.Options = map[string]string{}
	}
}

// firstKey returns the first key of the JSON object in text when it is a
// plain (escape-free) string, else nil. The result aliases text.
func firstKey(text []byte) []byte {
	i := 1
	for i < len(text) && isSpace(text[i]) {
		i++
	}
	if i >= len(text) || text[i] != '"' {
		return nil
	}
	end := bytes.IndexByte(text[i+1:], '"')
	if end < 0 {
		return nil
	}
	key := text[i+1 : i+1+end]
	if bytes.IndexByte(key, '\\') >= 0 {
		return nil
	}
	j := i + 2 + end
	for j < len(text) && isSpace(text[j]) {
		j++
	}
	if j >= len(text) || text[j] != ':' {
		return nil
	}
	return key
}

// objectValue reports whether the value of key, the first key of text as
// returned by firstKey (it aliases text), is a JSON object or null (an
// absent action, as for the decoded ones). `{"add":"x"}` is not.
func objectValue(text, key []byte) bool {
	i := cap(text) - cap(key) + len(key) + 1 // just past the key's closing quote
	for i < len(text) && (isSpace(text[i]) || text[i] == ':') {
		i++
	}
	return i < len(text) && (text[i] == '{' || bytes.HasPrefix(text[i:], []byte("null")))
}

// balanced reports whether text is one bracket-balanced object: every {
// and [ outside strings is closed, strings are terminated, and nothing
// follows the closing brace. Strings are skipped with bytes.IndexByte: a
// quote ends the string unless an odd run of backslashes precedes it.
func balanced(text []byte) bool {
	depth := 0
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '"':
			end := stringEnd(text, i+1)
			if end < 0 {
				return false
			}
			i = end
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth < 0 {
				return false
			}
			if depth == 0 && i != len(text)-1 {
				return false
			}
		}
	}
	return depth == 0
}

// stringEnd returns the index of the quote closing the JSON string whose
// contents start at from, or -1 when the string is not terminated.
func stringEnd(text []byte, from int) int {
	for {
		q := bytes.IndexByte(text[from:], '"')
		if q < 0 {
			return -1
		}
		q += from
		n := 0
		for k := q - 1; k >= from && text[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			return q
		}
		from = q + 1
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }
