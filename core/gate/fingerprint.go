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
	return digest([]byte(tool), canonicalArgs, []byte(cwd))
}

// ShellMetadata are the arguments of a shell tool that describe how an agent wants a
// command run or explained, never what runs: Claude Code's Bash and PowerShell
// `description`, `timeout` and `run_in_background`, Gemini CLI's `description`,
// `is_background` and `delay_ms`. A shell tool's fingerprint leaves them out, so rewording a
// denied command's description does not escape the denial ledger and a session grant
// survives it. Every other argument (a sandbox escape, anything unknown) stays in.
var ShellMetadata = map[string]bool{
	"description": true, "timeout": true, "run_in_background": true, "is_background": true, "delay_ms": true,
}

// shellDomain separates shell-call fingerprints from every other encoding; fingerprints
// stored before it existed simply stop matching (a grant is asked again, never widened).
const shellDomain = "approvebot shell call v2"

// ShellFingerprint is the fingerprint of a shell-tool call: what runs — the tool, the
// arguments other than ShellMetadata (the command line among them) and the cwd.
func ShellFingerprint(tool string, args map[string]any, cwd string) (string, error) {
	kept := make(map[string]any, len(args))
	for k, v := range args {
		if !ShellMetadata[k] {
			kept[k] = v
		}
	}
	canonical, err := Canonical(kept)
	if err != nil {
		return "", err
	}
	return digest([]byte(shellDomain), []byte(tool), canonical, []byte(cwd)), nil
}

// CallFingerprint is the fingerprint the gate stores for a call: ShellFingerprint for a
// shell tool, Fingerprint over the canonical arguments for any other.
func CallFingerprint(tool string, args map[string]any, canonicalArgs []byte, cwd string, shell bool) (string, error) {
	if shell {
		return ShellFingerprint(tool, args, cwd)
	}
	return Fingerprint(tool, canonicalArgs, cwd), nil
}

func digest(parts ...[]byte) string {
	h := sha256.New()
	var n [8]byte
	for _, part := range parts {
		binary.BigEndian.PutUint64(n[:], uint64(len(part)))
		h.Write(n[:])
		h.Write(part)
	}
	return hex.EncodeToString(h.Sum(nil))
}
