package deltalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// Strings in the log must be valid UTF-8 (issue 21, item 4). The JSON
// decoder replaces invalid bytes, and \u escapes of lone UTF-16
// surrogates, with U+FFFD without a word, so a field named "a\xff\xfeb"
// would reach the catalog as "a\ufffd\ufffdb". Checkpoint strings come
// from Parquet byte arrays unchecked. Both are refused as ErrCorrupt,
// naming the field; only the actions deltalog keeps (protocol, metaData,
// domainMetadata) are checked, so the add lines of a commit cost nothing.

// checkRawText checks the raw JSON of a kept action: valid UTF-8 and no
// escaped lone surrogate. On failure it names the field. The check
// functions here return plain errors: callers wrap them in ErrCorrupt.
func checkRawText(action string, raw []byte) error {
	if utf8.Valid(raw) && !hasLoneSurrogate(raw) {
		return nil
	}
	return errors.New(locateBadText(action, raw))
}

// hasLoneSurrogate reports whether JSON text holds a \u escape of a UTF-16
// surrogate that is not part of a high-low pair.
func hasLoneSurrogate(text []byte) bool {
	for i := 0; ; {
		j := bytes.Index(text[i:], []byte(`\u`))
		if j < 0 {
			return false
		}
		j += i
		i = j + 2
		if !escapeAt(text, j) {
			continue
		}
		r, ok := hex4(text, j+2)
		if !ok || r < 0xd800 || r > 0xdfff {
			continue
		}
		if r >= 0xdc00 {
			return true // a low surrogate first
		}
		if j+12 > len(text) || text[j+6] != '\\' || text[j+7] != 'u' {
			return true
		}
		if lo, ok := hex4(text, j+8); !ok || lo < 0xdc00 || lo > 0xdfff {
			return true
		}
		i = j + 12
	}
}

// escapeAt reports whether the backslash at text[j] starts an escape (is
// preceded by an even run of backslashes).
func escapeAt(text []byte, j int) bool {
	n := 0
	for k := j - 1; k >= 0 && text[k] == '\\'; k-- {
		n++
	}
	return n%2 == 0
}

// hex4 parses four hex digits at text[i:].
func hex4(text []byte, i int) (rune, bool) {
	if i+4 > len(text) {
		return 0, false
	}
	var r rune
	for _, c := range text[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// badText reports whether a raw JSON value holds invalid text.
func badText(raw []byte) bool { return !utf8.Valid(raw) || hasLoneSurrogate(raw) }

// locateBadText names the field of raw (a JSON value at path) holding
// invalid text, with the bytes around it. It is the slow path of a
// failed check.
func locateBadText(path string, raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '{' {
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) == nil {
			keys := make([]string, 0, len(obj))
			for k := range obj {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				if badText(obj[k]) {
					return locateBadText(path+"."+k, obj[k])
				}
			}
			return fmt.Sprintf("%s: a key is not valid text (near %s)", path, nearBad(raw))
		}
	}
	if len(raw) > 0 && raw[0] == '[' {
		var arr []json.RawMessage
		if json.Unmarshal(raw, &arr) == nil {
			for i, v := range arr {
				if badText(v) {
					return locateBadText(fmt.Sprintf("%s[%d]", path, i), v)
				}
			}
		}
	}
	if utf8.Valid(raw) {
		return fmt.Sprintf("%s holds an escaped lone UTF-16 surrogate (near %s)", path, nearBad(raw))
	}
	return fmt.Sprintf("%s is not valid UTF-8 (near %s)", path, nearBad(raw))
}

// nearBad quotes the bytes around the first invalid UTF-8 sequence or
// lone surrogate escape of raw.
func nearBad(raw []byte) string {
	at := 0
	for at < len(raw) {
		r, n := utf8.DecodeRune(raw[at:])
		if r == utf8.RuneError && n <= 1 {
			break
		}
		at += n
	}
	if at == len(raw) { // valid UTF-8: the first surrogate escape
		if k := bytes.Index(bytes.ToLower(raw), []byte(`\ud`)); k >= 0 {
			at = k
		} else {
			at = 0
		}
	}
	from, to := max(at-16, 0), min(at+16, len(raw))
	return fmt.Sprintf("%q", raw[from:to])
}

// checkText checks one decoded string (from a checkpoint, or the inner
// JSON of a schemaString or a domain configuration).
func checkText(field, s string, isJSON bool) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("%s is not valid UTF-8 (near %s)", field, nearBad([]byte(s)))
	}
	if isJSON && strings.Contains(s, `\u`) && hasLoneSurrogate([]byte(s)) {
		return fmt.Errorf("%s holds an escaped lone UTF-16 surrogate (near %s)", field, nearBad([]byte(s)))
	}
	return nil
}

// checkMetadataText checks every string of a metaData action.
func checkMetadataText(m *Metadata) error {
	for _, f := range []struct {
		name, v string
		json    bool
	}{{"metaData.id", m.ID, false}, {"metaData.name", m.Name, false}, {"metaData.description", m.Description, false},
		{"metaData.format.provider", m.Format.Provider, false}, {"metaData.schemaString", m.SchemaString, true}} {
		if err := checkText(f.name, f.v, f.json); err != nil {
			return err
		}
	}
	for i, p := range m.PartitionColumns {
		if err := checkText(fmt.Sprintf("metaData.partitionColumns[%d]", i), p, false); err != nil {
			return err
		}
	}
	if err := checkMapText("metaData.configuration", m.Configuration); err != nil {
		return err
	}
	return checkMapText("metaData.format.options", m.Format.Options)
}

func checkMapText(field string, m map[string]string) error {
	for k, v := range m {
		if err := checkText(field+" key", k, false); err != nil {
			return err
		}
		if err := checkText(fmt.Sprintf("%s[%q]", field, k), v, false); err != nil {
			return err
		}
	}
	return nil
}

// checkProtocolText checks the feature names of a protocol action.
func checkProtocolText(p *Protocol) error {
	for i, f := range p.ReaderFeatures {
		if err := checkText(fmt.Sprintf("protocol.readerFeatures[%d]", i), f, false); err != nil {
			return err
		}
	}
	for i, f := range p.WriterFeatures {
		if err := checkText(fmt.Sprintf("protocol.writerFeatures[%d]", i), f, false); err != nil {
			return err
		}
	}
	return nil
}

// checkDomainText checks a domainMetadata action.
func checkDomainText(d *domainAction) error {
	if err := checkText("domainMetadata.domain", d.Domain, false); err != nil {
		return err
	}
	return checkText(fmt.Sprintf("domainMetadata[%q].configuration", d.Domain), d.Configuration, true)
}
