package logctx

import (
	"net/url"
	"strings"
)

// RedactURL is raw with the password of its userinfo replaced by "xxxxx"
// ([url.URL.Redacted]; raw itself when it has none), for a URL a client
// sent that may end up in a log line or an error (an image URL,
// Boot.HttpBootUri). A URL that does not parse loses everything between
// "://" and its last "@" instead.
func RedactURL(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		if _, ok := u.User.Password(); !ok {
			return raw
		}
		return u.Redacted()
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
	return scheme + "xxxxx" + rest[at:]
}
