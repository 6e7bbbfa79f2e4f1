package uc

import "strings"

// minLeak is the shortest run of a token's characters that is redacted
// wherever it appears: a server may echo the token lowercased, truncated or
// split, and any 8 characters of it narrow a guess too much to print.
const minLeak = 8

// redactToken replaces, case-insensitively, every run of at least minLeak
// characters of tok found in s (and tok itself when shorter) with
// "[REDACTED]".
func redactToken(s, tok string) string {
	if tok == "" || s == "" {
		return s
	}
	ls, lt := asciiLower(s), asciiLower(tok)
	n := min(minLeak, len(lt))
	grams := make(map[string]struct{}, len(lt)-n+1)
	for i := 0; i+n <= len(lt); i++ {
		grams[lt[i:i+n]] = struct{}{}
	}
	hide := make([]bool, len(ls))
	found := false
	for i := 0; i+n <= len(ls); i++ {
		if _, ok := grams[ls[i:i+n]]; ok {
			for j := i; j < i+n; j++ {
				hide[j] = true
			}
			found = true
		}
	}
	if !found {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if !hide[i] {
			b.WriteByte(s[i])
			i++
			continue
		}
		for i < len(s) && hide[i] {
			i++
		}
		b.WriteString("[REDACTED]")
	}
	return b.String()
}

// asciiLower lowercases ASCII letters only, so byte offsets are kept.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
