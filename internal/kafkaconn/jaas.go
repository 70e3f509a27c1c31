package kafkaconn

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// JAAS login modules of the Kafka client that connectd reads from
// `sasl.jaas.config`, by their class name.
const (
	jaasPlain  = "org.apache.kafka.common.security.plain.PlainLoginModule"
	jaasScram  = "org.apache.kafka.common.security.scram.ScramLoginModule"
	jaasOAuth  = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
	jaasKrb5   = "com.sun.security.auth.module.Krb5LoginModule"
	jaasPrefix = "org.apache.kafka.common.security."
)

// JAAS is a parsed `sasl.jaas.config`: one login module with its options.
// Its String never shows the password.
type JAAS struct {
	// Module is the login module's class name.
	Module string
	// Flag is the control flag (required, requisite, sufficient, optional).
	Flag string
	// Options are the module's key=value options, in any order.
	Options map[string]string
}

func (j JAAS) String() string {
	return fmt.Sprintf("%s %s (options %s)", j.Module, j.Flag, strings.Join(slices.Sorted(maps.Keys(j.Options)), ", "))
}

// ParseJAAS reads a Kafka `sasl.jaas.config` value as the Java client's
// JaasConfig does: `<LoginModuleClass> <flag> key="value" key2=value2;`,
// exactly one login module, values quoted with double quotes (a backslash
// escapes the next character) or bare words. Errors never quote option
// values: a password must not reach a log.
func ParseJAAS(s string) (JAAS, error) {
	toks, err := jaasTokens(s)
	if err != nil {
		return JAAS{}, err
	}
	if len(toks) == 0 {
		return JAAS{}, fmt.Errorf("empty; want `<LoginModule class> required username=\"...\" password=\"...\";`")
	}
	var j JAAS
	i := 0
	next := func() (jaasToken, bool) {
		if i >= len(toks) {
			return jaasToken{}, false
		}
		i++
		return toks[i-1], true
	}
	mod, _ := next()
	if mod.kind != jaasWord {
		return JAAS{}, fmt.Errorf("want a login module class name first")
	}
	j.Module = mod.text
	flag, ok := next()
	if !ok || flag.kind != jaasWord {
		return JAAS{}, fmt.Errorf("login module %s: want a control flag (required, requisite, sufficient or optional) after the class name", j.Module)
	}
	switch strings.ToLower(flag.text) {
	case "required", "requisite", "sufficient", "optional":
		j.Flag = strings.ToLower(flag.text)
	default:
		return JAAS{}, fmt.Errorf("login module %s: unknown control flag %q (want required, requisite, sufficient or optional)", j.Module, flag.text)
	}
	j.Options = map[string]string{}
	for {
		t, ok := next()
		if !ok {
			return JAAS{}, fmt.Errorf("login module %s: missing the closing ';'", j.Module)
		}
		if t.kind == jaasSemicolon {
			break
		}
		if t.kind != jaasWord {
			return JAAS{}, fmt.Errorf("login module %s: want an option name, got a quoted string", j.Module)
		}
		eq, ok := next()
		if !ok || eq.kind != jaasEquals {
			return JAAS{}, fmt.Errorf("login module %s: option %s: want '=' and a value", j.Module, t.text)
		}
		v, ok := next()
		if !ok || (v.kind != jaasWord && v.kind != jaasQuoted) {
			return JAAS{}, fmt.Errorf("login module %s: option %s: want a value after '='", j.Module, t.text)
		}
		if _, dup := j.Options[t.text]; dup {
			return JAAS{}, fmt.Errorf("login module %s: option %s given twice", j.Module, t.text)
		}
		j.Options[t.text] = v.text
	}
	if i < len(toks) {
		return JAAS{}, fmt.Errorf("holds more than one login module; the Kafka client takes exactly one")
	}
	return j, nil
}

type jaasKind uint8

const (
	jaasWord jaasKind = iota
	jaasQuoted
	jaasEquals
	jaasSemicolon
)

type jaasToken struct {
	kind jaasKind
	text string
}

// jaasTokens splits a JAAS configuration into words, quoted strings, '='
// and ';'. Comments (`//` and `/* */`) are skipped, as Java's parser does.
func jaasTokens(s string) ([]jaasToken, error) {
	var toks []jaasToken
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case strings.HasPrefix(s[i:], "//"):
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case strings.HasPrefix(s[i:], "/*"):
			end := strings.Index(s[i+2:], "*/")
			if end < 0 {
				return nil, fmt.Errorf("unterminated /* comment")
			}
			i += end + 4
		case c == '=':
			toks = append(toks, jaasToken{kind: jaasEquals})
			i++
		case c == ';':
			toks = append(toks, jaasToken{kind: jaasSemicolon})
			i++
		case c == '"' || c == '\'':
			var b strings.Builder
			j := i + 1
			for ; j < len(s) && s[j] != c; j++ {
				if s[j] == '\\' && j+1 < len(s) {
					j++
				}
				b.WriteByte(s[j])
			}
			if j >= len(s) {
				return nil, fmt.Errorf("unterminated quoted value (a missing %c)", c)
			}
			toks = append(toks, jaasToken{kind: jaasQuoted, text: b.String()})
			i = j + 1
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \t\n\r=;\"'", rune(s[j])) {
				j++
			}
			toks = append(toks, jaasToken{kind: jaasWord, text: s[i:j]})
			i = j
		}
	}
	return toks, nil
}

// Credentials returns the SASL settings of a login module for mechanism
// (as Kafka: the mechanism is chosen by `sasl.mechanism`, and the module
// must be the one of that mechanism). Errors name the option and never
// quote a value.
func (j JAAS) Credentials(mech Mechanism) (SASL, error) {
	want := ""
	switch mech {
	case MechanismPlain:
		want = jaasPlain
	case MechanismScramSHA256, MechanismScramSHA512:
		want = jaasScram
	case MechanismOAuthBearer:
		return SASL{}, fmt.Errorf("login module %s: connectd cannot run the Java login callbacks of OAUTHBEARER; "+
			"give the bearer token in field %s.%s (with %s.%s: %s, or option 'properties.sasl.mechanism' = 'OAUTHBEARER') and leave 'properties.sasl.jaas.config' out",
			shortModule(j.Module), FieldSASL, FieldSASLToken, FieldSASL, FieldSASLMechanism, MechanismOAuthBearer)
	default:
		return SASL{}, fmt.Errorf("SASL mechanism %q is not supported (want %s, %s, %s or %s)", mech, MechanismPlain, MechanismScramSHA256, MechanismScramSHA512, MechanismOAuthBearer)
	}
	if j.Module != want {
		why := ""
		switch j.Module {
		case jaasKrb5:
			why = " (Kerberos/GSSAPI is not supported by connectd)"
		case jaasOAuth:
			why = " (OAUTHBEARER takes its token from field sasl.token)"
		}
		return SASL{}, fmt.Errorf("login module %s does not go with SASL mechanism %s%s; want %s", j.Module, mech, why, want)
	}
	s := SASL{Mechanism: mech, Username: j.Options["username"], Password: j.Options["password"]}
	var errs []string
	for _, k := range slices.Sorted(maps.Keys(j.Options)) {
		switch k {
		case "username", "password":
		case "tokenauth":
			if want != jaasScram {
				errs = append(errs, fmt.Sprintf("option %s is only for %s", k, shortModule(jaasScram)))
				continue
			}
			switch strings.ToLower(j.Options[k]) {
			case "true":
				s.ScramToken = true
			case "false":
			default:
				errs = append(errs, fmt.Sprintf("option %s: want true or false", k))
			}
		default:
			errs = append(errs, fmt.Sprintf("option %s is not read by connectd (%s takes username, password%s)", k, shortModule(want),
				map[bool]string{true: " and tokenauth", false: ""}[want == jaasScram]))
		}
	}
	if s.Username == "" {
		errs = append(errs, "option username is required")
	}
	if _, ok := j.Options["password"]; !ok {
		errs = append(errs, "option password is required")
	}
	if len(errs) > 0 {
		return SASL{}, fmt.Errorf("login module %s: %s", shortModule(j.Module), strings.Join(errs, "; "))
	}
	return s, nil
}

// shortModule drops the Kafka package of a login module class name.
func shortModule(m string) string { return strings.TrimPrefix(m, jaasPrefix) }
