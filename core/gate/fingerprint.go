package gate

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
)

// Canonical is the canonical JSON of decoded arguments: object keys sorted, no whitespace,
// no HTML escaping, numbers as written (decode with UseNumber). Duplicate keys were already
// collapsed by the decoder to the last value; the API rejects them before this point.
func Canonical(args map[string]any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(args); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// Fingerprint is SHA-256 over the tool name, the canonical raw arguments and the cwd, each
// length-prefixed so no two different triples share an encoding. It never covers the
// redacted summary: redaction would collapse distinct secrets into one grant.
func Fingerprint(tool string, canonicalArgs []byte, cwd string) string {
	h := sha256.New()
	var n [8]byte
	for _, part := range [][]byte{[]byte(tool), canonicalArgs, []byte(cwd)} {
		binary.BigEndian.PutUint64(n[:], uint64(len(part)))
		h.Write(n[:])
		h.Write(part)
	}
	return hex.EncodeToString(h.Sum(nil))
}
