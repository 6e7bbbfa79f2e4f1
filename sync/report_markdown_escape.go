package sync

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Names and values in a Markdown report come from the catalog and the
// logs: anything may be in them. Each is written as literal text that
// can neither end a table cell, start Markdown (emphasis, links, code,
// math, emoji), nor open HTML, and in a <code> element, where GitHub
// makes no @mention, issue reference or autolink.

// mdEntities are the characters written as character references: HTML's
// own, and every one a Markdown construct (or a table cell) starts or
// ends with. A character reference is literal text in Markdown and holds
// no "|" for GitHub to split a table row at.
var mdEntities = strings.NewReplacer(
	"&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;",
	`\`, "&#92;", "`", "&#96;", "*", "&#42;", "_", "&#95;", "~", "&#126;",
	"[", "&#91;", "]", "&#93;", "|", "&#124;", "$", "&#36;", ":", "&#58;",
	"@", "&#64;", "#", "&#35;", "!", "&#33;",
)

// mdText is s as literal inline text: the characters mdEntities names
// as references, a line break as <br>, other control characters as a
// visible \xNN; longer than mdMaxCell bytes, it is cut and says so.
func mdText(s string) string {
	s, cut := truncate(s, mdMaxCell)
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\n':
			b.WriteString("\x00br\x00")
		case r == '\r':
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
	}
	out := strings.ReplaceAll(mdEntities.Replace(b.String()), "\x00br\x00", "<br>")
	if cut > 0 {
		out += fmt.Sprintf(" … (%d more bytes)", cut)
	}
	return out
}

// htmlText is s for an HTML element's text (a <summary>): mdText.
func htmlText(s string) string { return mdText(s) }

// code is s as literal text in a <code> element; empty, it says so.
func code(s string) string {
	if s == "" {
		return "*(empty)*"
	}
	return "<code>" + mdText(s) + "</code>"
}

// truncate cuts s to at most n bytes on a rune boundary and returns how
// many bytes it cut.
func truncate(s string, n int) (string, int) {
	if len(s) <= n {
		return s, 0
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i], len(s) - i
}
