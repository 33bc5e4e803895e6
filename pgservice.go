package pgline

// applyService adds the keys of the service named by service or PGSERVICE
// to s, without replacing keys already set, so that the DSN wins over the
// service file and the service file over the environment (see package dsn
// for where the file is looked for).
func applyService(s settings, src *configSource) error {
	name := s.get("service")
	if _, inDSN := s["service"]; !inDSN {
		name = src.Env("PGSERVICE")
	}
	if name == "" {
		return nil
	}
	pairs, file, err := src.Service(name)
	if err != nil {
		return dsnError(err)
	}
	for _, p := range pairs {
		if _, ok := s[p.Key]; !ok {
			s[p.Key] = setting{value: p.Value, origin: "service file " + file}
		}
	}
	return nil
}
