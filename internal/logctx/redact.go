package logctx

import (
	"net/url"
	"strings"
)

// redacted stands for the whole userinfo of a redacted URL.
const redacted = "xxxxx"

// RedactURL is raw with its whole userinfo (user name and password: a
// token is often sent as the user name alone, "https://ghp_...@host/")
// replaced by "xxxxx"; raw itself when it has none. It is for a URL a
// client or a server sent that may end up in a log line, an error or an
// answer (an image URL, Boot.HttpBootUri, a redirect target). A URL that
// does not parse loses everything between "://" and its last "@" instead.
func RedactURL(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		if u.User == nil {
			return raw
		}
		return RedactedURL(u)
	}
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		rest, scheme = raw, ""
	}
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return raw
	}
	if ok {
		scheme += "://"
	}
	return scheme + redacted + rest[at:]
}

// RedactedURL is u as a string with its whole userinfo replaced by "xxxxx"
// (where [url.URL.Redacted] hides the password only); u is not changed.
func RedactedURL(u *url.URL) string {
	if u == nil {
		return ""
	}
	if u.User == nil {
		return u.String()
	}
	c := *u
	c.User = url.User(redacted)
	return c.String()
}
