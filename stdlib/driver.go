package stdlib

import (
	"context"
	"database/sql"
	"database/sql/driver"

	"github.com/pgline/pgline"
)

// DriverName is the name the package registers with database/sql.
const DriverName = "pgline"

func init() {
	sql.Register(DriverName, &Driver{})
}

// Driver is the database/sql driver registered as "pgline". Its Open and
// OpenConnector take a DSN in the forms pgline.ParseConfig reads.
type Driver struct{}

// Open opens one connection described by dsn. database/sql calls
// OpenConnector instead, which parses the DSN once.
func (d *Driver) Open(dsn string) (driver.Conn, error) {
	cn, err := d.OpenConnector(dsn)
	if err != nil {
		return nil, err
	}
	return cn.Connect(context.Background())
}

// OpenConnector parses dsn and returns a Connector for it (driver.DriverContext).
func (d *Driver) OpenConnector(dsn string) (driver.Connector, error) {
	cfg, err := pgline.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	return newConnector(cfg, d), nil
}

// Connector opens connections from a pgline.Config; it implements
// driver.Connector. It is safe for concurrent use.
type Connector struct {
	cfg *pgline.Config
	drv *Driver
}

// NewConnector returns a Connector for cfg, for sql.OpenDB. cfg must not
// be changed afterwards.
func NewConnector(cfg *pgline.Config) *Connector {
	return newConnector(cfg, &Driver{})
}

func newConnector(cfg *pgline.Config, d *Driver) *Connector {
	return &Connector{cfg: cfg, drv: d}
}

// Connect opens a connection (driver.Connector).
func (cn *Connector) Connect(ctx context.Context) (driver.Conn, error) {
	if cn.cfg == nil {
		return nil, errNilConfig
	}
	c, err := pgline.ConnectConfig(ctx, cn.cfg)
	if err != nil {
		return nil, err
	}
	return newConn(c, c.TypeMap()), nil
}

// Driver returns the Driver (driver.Connector).
func (cn *Connector) Driver() driver.Driver { return cn.drv }

// OpenDB returns a *sql.DB whose connections are opened with cfg, which
// must not be changed afterwards. Like sql.Open, it connects to nothing
// until the first use.
func OpenDB(cfg *pgline.Config) *sql.DB {
	return sql.OpenDB(NewConnector(cfg))
}

// The database/sql interfaces the driver implements.
var (
	_ driver.DriverContext                  = (*Driver)(nil)
	_ driver.Connector                      = (*Connector)(nil)
	_ driver.ConnBeginTx                    = (*Conn)(nil)
	_ driver.ConnPrepareContext             = (*Conn)(nil)
	_ driver.QueryerContext                 = (*Conn)(nil)
	_ driver.ExecerContext                  = (*Conn)(nil)
	_ driver.Pinger                         = (*Conn)(nil)
	_ driver.SessionResetter                = (*Conn)(nil)
	_ driver.Validator                      = (*Conn)(nil)
	_ driver.NamedValueChecker              = (*Conn)(nil)
	_ driver.StmtQueryContext               = (*Stmt)(nil)
	_ driver.StmtExecContext                = (*Stmt)(nil)
	_ driver.RowsColumnTypeDatabaseTypeName = (*Rows)(nil)
	_ driver.RowsColumnTypeScanType         = (*Rows)(nil)
	_ driver.RowsColumnTypeNullable         = (*Rows)(nil)
	_ driver.RowsColumnTypeLength           = (*Rows)(nil)
	_ driver.RowsColumnTypePrecisionScale   = (*Rows)(nil)
)
