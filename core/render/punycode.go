package render

import "strings"

// Punycode (RFC 3492) encoding of one label, enough to show a suspicious host name the way
// browsers do ("xn--pple-43d.com"). The standard library has no encoder and core/render
// imports nothing else; golang.org/x/net/idna would add a dependency for 60 lines.

const (
	pcBase        = 36
	pcTMin        = 1
	pcTMax        = 26
	pcSkew        = 38
	pcDamp        = 700
	pcInitialBias = 72
	pcInitialN    = 128
)

// maxPunyLabel bounds the input: DNS labels are at most 63 octets, and it keeps the
// arithmetic far from overflow.
const maxPunyLabel = 63

// punycodeLabel returns "xn--" and the Punycode of label (lower-cased), or ok=false when the
// label is ASCII or too long to be a host label.
func punycodeLabel(label string) (string, bool) {
	runes := []rune(strings.ToLower(label))
	if len(runes) == 0 || len(runes) > maxPunyLabel {
		return "", false
	}
	var out []byte
	for _, r := range runes {
		if r < 0x80 {
			out = append(out, byte(r))
		}
	}
	basic := len(out)
	if basic == len(runes) {
		return "", false
	}
	if basic > 0 {
		out = append(out, '-')
	}
	n, delta, bias, h := pcInitialN, 0, pcInitialBias, basic
	for h < len(runes) {
		m := int(^uint(0) >> 1)
		for _, r := range runes {
			if int(r) >= n && int(r) < m {
				m = int(r)
			}
		}
		delta += (m - n) * (h + 1)
		n = m
		for _, r := range runes {
			if int(r) < n {
				delta++
			}
			if int(r) != n {
				continue
			}
			q := delta
			for k := pcBase; ; k += pcBase {
				t := k - bias
				if t < pcTMin {
					t = pcTMin
				} else if t > pcTMax {
					t = pcTMax
				}
				if q < t {
					break
				}
				out = append(out, punyDigit(t+(q-t)%(pcBase-t)))
				q = (q - t) / (pcBase - t)
			}
			out = append(out, punyDigit(q))
			bias = punyAdapt(delta, h+1, h == basic)
			delta = 0
			h++
		}
		delta++
		n++
	}
	return "xn--" + string(out), true
}

func punyDigit(d int) byte {
	if d < 26 {
		return byte('a' + d)
	}
	return byte('0' + d - 26)
}

func punyAdapt(delta, numPoints int, first bool) int {
	if first {
		delta /= pcDamp
	} else {
		delta /= 2
	}
	delta += delta / numPoints
	k := 0
	for delta > ((pcBase-pcTMin)*pcTMax)/2 {
		delta /= pcBase - pcTMin
		k += pcBase
	}
	return k + (pcBase-pcTMin+1)*delta/(delta+pcSkew)
}
