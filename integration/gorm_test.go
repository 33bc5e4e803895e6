package integration

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/lib/pq"
	"github.com/pgline/pgline"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
	"gorm.io/gorm/logger"
)

type gormCompany struct {
	ID   uint   `gorm:"primaryKey"`
	Name string `gorm:"size:100;not null;uniqueIndex"`
}

type gormProfile struct {
	ID         uint   `gorm:"primaryKey"`
	GormUserID uint   `gorm:"not null;uniqueIndex"`
	Bio        string `gorm:"type:text"`
}

type gormOrder struct {
	ID         uint      `gorm:"primaryKey"`
	GormUserID uint      `gorm:"not null;index"`
	Total      string    `gorm:"type:numeric(12,2);not null"`
	PlacedAt   time.Time `gorm:"not null"`
}

type gormLanguage struct {
	ID   uint   `gorm:"primaryKey"`
	Code string `gorm:"size:8;not null;uniqueIndex"`
}

// gormUser has a column of each common type and every kind of
// association.
type gormUser struct {
	ID        uint `gorm:"primaryKey"`
	CreatedAt time.Time
	UpdatedAt time.Time
	DeletedAt gorm.DeletedAt `gorm:"index"`
	Name      string         `gorm:"size:64;not null;uniqueIndex"`
	Age       int16
	Score     int32
	Visits    int64
	Balance   string  `gorm:"type:numeric(10,2);not null;default:0"`
	Ratio     *string `gorm:"type:numeric"`
	Active    bool
	Avatar    []byte
	BirthDay  *time.Time      `gorm:"type:date"`
	LastSeen  time.Time       `gorm:"type:timestamp"`
	UUID      string          `gorm:"type:uuid;not null"`
	Settings  json.RawMessage `gorm:"type:jsonb"`
	Tags      pq.StringArray  `gorm:"type:text[]"`
	Lucky     pq.Int64Array   `gorm:"type:int8[]"`
	Nickname  sql.NullString
	CompanyID *uint
	Company   *gormCompany
	Profile   gormProfile
	Orders    []gormOrder
	Languages []gormLanguage `gorm:"many2many:gorm_user_languages"`
}

// newGorm opens GORM on a new database through driver "pgline".
func newGorm(t *testing.T) (*gorm.DB, *sql.DB) {
	t.Helper()
	dsn := newDatabase(t)
	db, err := gorm.Open(postgres.New(postgres.Config{DriverName: "pgline", DSN: dsn}),
		&gorm.Config{Logger: logger.Default.LogMode(logger.Silent)})
	if err != nil {
		t.Fatal(err)
	}
	sqlDB, err := db.DB()
	if err != nil {
		t.Fatal(err)
	}
	sqlDB.SetMaxOpenConns(8)
	t.Cleanup(func() { sqlDB.Close() })
	return db, sqlDB
}

// checkUser compares a user read back with the one written, associations
// aside.
func checkUser(t *testing.T, got, want gormUser) {
	t.Helper()
	near := func(a, b time.Time) bool { d := a.Sub(b); return d > -time.Microsecond && d < time.Microsecond }
	if !near(got.CreatedAt, want.CreatedAt) || !near(got.UpdatedAt, want.UpdatedAt) || !got.LastSeen.Equal(want.LastSeen) ||
		(got.BirthDay == nil) != (want.BirthDay == nil) || got.BirthDay != nil && !got.BirthDay.Equal(*want.BirthDay) {
		t.Errorf("%s: times %v %v %v %v, want %v %v %v %v", want.Name, got.CreatedAt, got.UpdatedAt, got.LastSeen, got.BirthDay,
			want.CreatedAt, want.UpdatedAt, want.LastSeen, want.BirthDay)
	}
	var gs, ws any
	_ = json.Unmarshal(got.Settings, &gs)
	_ = json.Unmarshal(want.Settings, &ws)
	if !reflect.DeepEqual(gs, ws) {
		t.Errorf("%s: settings %s, want %s", want.Name, got.Settings, want.Settings)
	}
	g, w := got, want
	g.CreatedAt, g.UpdatedAt, g.LastSeen, g.BirthDay, g.Settings = w.CreatedAt, w.UpdatedAt, w.LastSeen, w.BirthDay, w.Settings
	g.Company, g.Profile, g.Orders, g.Languages = w.Company, w.Profile, w.Orders, w.Languages
	if len(g.Avatar) == 0 && len(w.Avatar) == 0 {
		g.Avatar = w.Avatar
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("read back\n%+v\nwant\n%+v", g, w)
	}
}

func TestGorm(t *testing.T) {
	t.Parallel()
	db, sqlDB := newGorm(t)
	ctx := testCtx(t)
	db = db.WithContext(ctx)

	if err := db.AutoMigrate(&gormCompany{}, &gormLanguage{}, &gormUser{}, &gormProfile{}, &gormOrder{}); err != nil {
		t.Fatal(err)
	}
	// AutoMigrate again changes nothing and fails on nothing: it reads the
	// columns back through the driver (ColumnTypes) and finds them equal.
	if err := db.AutoMigrate(&gormCompany{}, &gormLanguage{}, &gormUser{}, &gormProfile{}, &gormOrder{}); err != nil {
		t.Fatalf("second AutoMigrate: %v", err)
	}
	if !db.Migrator().HasTable("gorm_user_languages") || !db.Migrator().HasIndex(&gormUser{}, "Name") {
		t.Fatal("AutoMigrate made no join table or no index")
	}

	birth := time.Date(1990, 2, 28, 0, 0, 0, 0, time.UTC)
	ratio := "0.333333333333333333"
	users := []gormUser{
		{
			Name: "ada", Age: 36, Score: -5, Visits: 1 << 40, Balance: "100.25", Ratio: &ratio, Active: true,
			Avatar: []byte{1, 2, 3}, BirthDay: &birth, LastSeen: time.Date(2024, 1, 2, 3, 4, 5, 6000, time.UTC),
			UUID: "6ba7b810-9dad-11d1-80b4-00c04fd430c8", Settings: json.RawMessage(`{"theme": "dark", "langs": ["en", "fr"]}`),
			Tags: pq.StringArray{"admin", "a,b", `q"uote`}, Lucky: pq.Int64Array{7, -13},
			Nickname: sql.NullString{String: "Countess", Valid: true},
			Company:  &gormCompany{Name: "Analytical Engines"},
			Profile:  gormProfile{Bio: "first programmer"},
			Orders: []gormOrder{
				{Total: "10.50", PlacedAt: time.Date(2024, 3, 1, 10, 0, 0, 0, time.UTC)},
				{Total: "0.99", PlacedAt: time.Date(2024, 3, 2, 10, 0, 0, 0, time.UTC)},
			},
			Languages: []gormLanguage{{Code: "en"}, {Code: "fr"}},
		},
		{
			Name: "bob", LastSeen: time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC), Balance: "0.00",
			UUID: "00000000-0000-0000-0000-000000000002", Settings: json.RawMessage(`[]`),
			Tags: pq.StringArray{}, Lucky: pq.Int64Array{},
			Profile: gormProfile{Bio: ""},
		},
	}

	t.Run("CRUD", func(t *testing.T) {
		if err := db.Create(&users).Error; err != nil {
			t.Fatal(err)
		}
		if users[0].ID == 0 || users[0].Company.ID == 0 || users[0].Orders[1].ID == 0 || users[0].Languages[1].ID == 0 {
			t.Fatalf("ids not returned: %+v", users[0])
		}
		// bob speaks English too: the existing language row is reused.
		if err := db.Model(&users[1]).Association("Languages").Append(&users[0].Languages[0]); err != nil {
			t.Fatal(err)
		}

		var got []gormUser
		err := db.Preload("Company").Preload("Profile").Preload("Languages", func(db *gorm.DB) *gorm.DB { return db.Order("code") }).
			Preload("Orders", func(db *gorm.DB) *gorm.DB { return db.Order("placed_at") }).Order("name").Find(&got).Error
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 {
			t.Fatalf("%d users", len(got))
		}
		for i := range got {
			checkUser(t, got[i], users[i])
		}
		a := got[0]
		if a.Company == nil || a.Company.Name != "Analytical Engines" || a.Profile.Bio != "first programmer" ||
			len(a.Orders) != 2 || a.Orders[0].Total != "10.50" || a.Orders[1].Total != "0.99" ||
			!a.Orders[0].PlacedAt.Equal(users[0].Orders[0].PlacedAt) || len(a.Languages) != 2 || a.Languages[1].Code != "fr" {
			t.Errorf("ada's associations: %+v %+v %+v %+v", a.Company, a.Profile, a.Orders, a.Languages)
		}
		if b := got[1]; b.Company != nil || len(b.Languages) != 1 || b.Languages[0].Code != "en" || len(b.Orders) != 0 {
			t.Errorf("bob's associations: %+v %+v %+v", b.Company, b.Languages, b.Orders)
		}

		// Joins (belongs-to), Where with named struct fields, aggregates.
		var withCompany []gormUser
		if err := db.Joins("Company").Where(&gormUser{Active: true}).Find(&withCompany).Error; err != nil {
			t.Fatal(err)
		}
		if len(withCompany) != 1 || withCompany[0].Company == nil || withCompany[0].Company.Name != "Analytical Engines" {
			t.Errorf("Joins: %+v", withCompany)
		}
		var total string
		if err := db.Model(&gormOrder{}).Select("sum(total)::text").Where("gorm_user_id = ?", users[0].ID).Scan(&total).Error; err != nil || total != "11.49" {
			t.Errorf("sum = %q, %v", total, err)
		}

		// Updates with a map, an expression, a struct; then read back.
		res := db.Model(&users[1]).Updates(map[string]any{"balance": "12.30", "tags": pq.StringArray{"x"}, "active": true})
		if res.Error != nil || res.RowsAffected != 1 {
			t.Fatalf("Updates: %v, %d rows", res.Error, res.RowsAffected)
		}
		if err := db.Model(&users[1]).Update("visits", gorm.Expr("visits + ?", 5)).Error; err != nil {
			t.Fatal(err)
		}
		var b gormUser
		if err := db.First(&b, users[1].ID).Error; err != nil {
			t.Fatal(err)
		}
		if b.Balance != "12.30" || !reflect.DeepEqual(b.Tags, pq.StringArray{"x"}) || !b.Active || b.Visits != 5 || !b.UpdatedAt.After(users[1].CreatedAt) {
			t.Errorf("after updates: %+v", b)
		}

		// Soft delete, then hard delete.
		if err := db.Delete(&b).Error; err != nil {
			t.Fatal(err)
		}
		var n int64
		db.Model(&gormUser{}).Count(&n)
		var all int64
		db.Unscoped().Model(&gormUser{}).Count(&all)
		if n != 1 || all != 2 {
			t.Errorf("after a soft delete: %d visible, %d in all", n, all)
		}
		var deleted gormUser
		if err := db.Unscoped().First(&deleted, b.ID).Error; err != nil || !deleted.DeletedAt.Valid {
			t.Errorf("soft-deleted row: %+v, %v", deleted.DeletedAt, err)
		}
		if err := db.Model(&deleted).Association("Languages").Clear(); err != nil {
			t.Fatal(err)
		}
		if err := db.Unscoped().Select("Profile").Delete(&deleted).Error; err != nil {
			t.Fatal(err)
		}
		db.Unscoped().Model(&gormUser{}).Count(&all)
		if all != 1 {
			t.Errorf("after a hard delete: %d rows", all)
		}
		if err := db.First(&gormUser{}, b.ID).Error; !errors.Is(err, gorm.ErrRecordNotFound) {
			t.Errorf("First of a deleted row: %v", err)
		}
	})

	t.Run("NestedTx", func(t *testing.T) {
		err := db.Transaction(func(tx *gorm.DB) error {
			if err := tx.Create(&gormLanguage{Code: "de"}).Error; err != nil {
				return err
			}
			// A nested Transaction is a savepoint: its error rolls back to it.
			err := tx.Transaction(func(tx2 *gorm.DB) error {
				if err := tx2.Create(&gormLanguage{Code: "nl"}).Error; err != nil {
					return err
				}
				return tx2.Create(&gormLanguage{Code: "de"}).Error // unique violation
			})
			var pgErr *pgline.PgError
			if !errors.As(err, &pgErr) || pgErr.Code != "23505" {
				return fmt.Errorf("nested: %v, want a unique violation", err)
			}
			// Savepoints by hand.
			tx.SavePoint("sp_es")
			if err := tx.Create(&gormLanguage{Code: "es"}).Error; err != nil {
				return err
			}
			tx.RollbackTo("sp_es")
			return tx.Create(&gormLanguage{Code: "it"}).Error
		})
		if err != nil {
			t.Fatal(err)
		}
		var codes []string
		if err := db.Model(&gormLanguage{}).Where("code IN ?", []string{"de", "nl", "es", "it"}).Order("code").Pluck("code", &codes).Error; err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(codes, []string{"de", "it"}) {
			t.Errorf("after nested transactions: %v, want [de it]", codes)
		}
		// A transaction whose function fails leaves nothing.
		sentinel := errors.New("give up")
		err = db.Transaction(func(tx *gorm.DB) error {
			if err := tx.Create(&gormLanguage{Code: "pt"}).Error; err != nil {
				return err
			}
			return sentinel
		}, &sql.TxOptions{Isolation: sql.LevelSerializable})
		if !errors.Is(err, sentinel) {
			t.Fatal(err)
		}
		var n int64
		if db.Model(&gormLanguage{}).Where("code = 'pt'").Count(&n); n != 0 {
			t.Errorf("rolled back row exists")
		}
	})

	t.Run("Upsert", func(t *testing.T) {
		for i := range 3 {
			c := gormCompany{Name: "Upserted"}
			err := db.Clauses(clause.OnConflict{
				Columns:   []clause.Column{{Name: "name"}},
				DoUpdates: clause.Assignments(map[string]any{"name": gorm.Expr("EXCLUDED.name")}),
			}).Create(&c).Error
			if err != nil {
				t.Fatalf("upsert %d: %v", i, err)
			}
			if c.ID == 0 {
				t.Fatalf("upsert %d: no id", i)
			}
		}
		u := gormUser{Name: "ada", UUID: "6ba7b810-9dad-11d1-80b4-00c04fd430c8", Visits: 3, Balance: "1.00"}
		err := db.Omit(clause.Associations).Clauses(clause.OnConflict{
			Columns:   []clause.Column{{Name: "name"}},
			DoUpdates: clause.Assignments(map[string]any{"visits": gorm.Expr("gorm_users.visits + EXCLUDED.visits")}),
		}).Create(&u).Error
		if err != nil {
			t.Fatal(err)
		}
		var ada gormUser
		if err := db.Where("name = ?", "ada").First(&ada).Error; err != nil || ada.Visits != 1<<40+3 || ada.Balance != "100.25" {
			t.Errorf("after upsert: visits %d balance %s, %v", ada.Visits, ada.Balance, err)
		}
		var n int64
		if db.Model(&gormCompany{}).Where("name = 'Upserted'").Count(&n); n != 1 {
			t.Errorf("%d companies named Upserted", n)
		}
		res := db.Clauses(clause.OnConflict{DoNothing: true}).Create(&gormLanguage{Code: "en"})
		if res.Error != nil || res.RowsAffected != 0 {
			t.Errorf("DO NOTHING: %v, %d rows", res.Error, res.RowsAffected)
		}
	})

	t.Run("PreparedStatements", func(t *testing.T) {
		ps := db.Session(&gorm.Session{PrepareStmt: true})
		for i := range 5 {
			var u gormUser
			if err := ps.Where("name = ? AND id > ?", "ada", i-10).First(&u).Error; err != nil || u.Name != "ada" {
				t.Fatalf("prepared %d: %+v, %v", i, u.Name, err)
			}
		}
	})

	t.Run("Goroutines", func(t *testing.T) {
		var ada gormUser
		if err := db.Where("name = ?", "ada").First(&ada).Error; err != nil {
			t.Fatal(err)
		}
		const workers, each = 50, 10
		var wg sync.WaitGroup
		errs := make(chan error, workers)
		for w := range workers {
			wg.Go(func() {
				for i := range each {
					err := db.Transaction(func(tx *gorm.DB) error {
						o := gormOrder{GormUserID: ada.ID, Total: fmt.Sprintf("%d.%02d", w, i), PlacedAt: time.Now()}
						if err := tx.Create(&o).Error; err != nil {
							return err
						}
						var back gormOrder
						if err := tx.First(&back, o.ID).Error; err != nil {
							return err
						}
						if back.Total != o.Total {
							return fmt.Errorf("order %d: total %s, want %s", o.ID, back.Total, o.Total)
						}
						return tx.Model(&gormUser{}).Where("id = ?", ada.ID).Update("score", gorm.Expr("score + 1")).Error
					})
					if err != nil {
						errs <- fmt.Errorf("worker %d: %w", w, err)
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		var n int64
		db.Model(&gormOrder{}).Where("gorm_user_id = ?", ada.ID).Count(&n)
		var after gormUser
		db.First(&after, ada.ID)
		if n != workers*each+2 || after.Score != ada.Score+workers*each {
			t.Errorf("%d orders, score %d; want %d, %d", n, after.Score, workers*each+2, ada.Score+workers*each)
		}
	})

	t.Run("Deadline", func(t *testing.T) {
		checkDeadline(t, sqlDB, func(ctx context.Context) error {
			return db.WithContext(ctx).Exec("SELECT pg_sleep(5)").Error
		})
	})
}

// gormPriceV1 and gormPriceV2 are one table at two versions: amount goes
// from numeric to numeric(10,2), and a column is added.
type gormPriceV1 struct {
	ID     uint   `gorm:"primaryKey"`
	Amount string `gorm:"type:numeric"`
}

func (gormPriceV1) TableName() string { return "prices" }

type gormPriceV2 struct {
	ID       uint   `gorm:"primaryKey"`
	Amount   string `gorm:"type:numeric(10,2)"`
	Currency string `gorm:"size:3;not null;default:'EUR'"`
}

func (gormPriceV2) TableName() string { return "prices" }

// TestGormAutoMigrateNumeric: AutoMigrate changes an unconstrained numeric
// column to numeric(10,2). GORM decides from the driver's
// ColumnTypePrecisionScale, which must say ok for plain numeric.
func TestGormAutoMigrateNumeric(t *testing.T) {
	t.Parallel()
	db, _ := newGorm(t)
	db = db.WithContext(testCtx(t))
	if err := db.AutoMigrate(&gormPriceV1{}); err != nil {
		t.Fatal(err)
	}
	if err := db.Create(&[]gormPriceV1{{Amount: "12.345"}, {Amount: "1.005"}, {Amount: "7"}}).Error; err != nil {
		t.Fatal(err)
	}
	columnType := func() string {
		var s string
		if err := db.Raw("SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'prices'::regclass AND attname = 'amount'").
			Scan(&s).Error; err != nil {
			t.Fatal(err)
		}
		return s
	}
	if got := columnType(); got != "numeric" {
		t.Fatalf("amount is %s before", got)
	}
	cts, err := db.Migrator().ColumnTypes(&gormPriceV1{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ct := range cts {
		if ct.Name() == "amount" {
			if p, s, ok := ct.DecimalSize(); p != 65535 || s != 65531 || !ok {
				t.Errorf("DecimalSize of plain numeric through GORM = %d, %d, %v; want 65535, 65531, true (as pgx)", p, s, ok)
			}
		}
	}

	if err := db.AutoMigrate(&gormPriceV2{}); err != nil {
		t.Fatal(err)
	}
	if got := columnType(); got != "numeric(10,2)" {
		t.Fatalf("amount is %s after AutoMigrate, want numeric(10,2)", got)
	}
	var got []gormPriceV2
	if err := db.Order("id").Find(&got).Error; err != nil {
		t.Fatal(err)
	}
	want := []gormPriceV2{{1, "12.35", "EUR"}, {2, "1.01", "EUR"}, {3, "7.00", "EUR"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("after AutoMigrate: %+v, want %+v", got, want)
	}
	// Once migrated, AutoMigrate leaves the column alone.
	if err := db.AutoMigrate(&gormPriceV2{}); err != nil {
		t.Fatal(err)
	}
	if got := columnType(); got != "numeric(10,2)" {
		t.Fatalf("amount is %s after a second AutoMigrate", got)
	}
}

// ecosystem.md: TestEcosystemGORM
// connectGORM opens GORM over pgline, with gorm.io/driver/postgres.
func connectGORM(dsn string) (*gorm.DB, error) {
	return gorm.Open(postgres.New(postgres.Config{
		DriverName: "pgline", // without it, the dialector opens pgx
		DSN:        dsn,
	}), &gorm.Config{})
}

// ecosystem.md: end

func TestEcosystemGORM(t *testing.T) {
	t.Parallel()
	db, err := connectGORM(newDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	sqlDB, _ := db.DB()
	defer sqlDB.Close()
	if name := reflect.TypeOf(sqlDB.Driver()).String(); name != "*stdlib.Driver" {
		t.Fatalf("GORM opened %s, not pgline", name)
	}
	type pet struct {
		ID    uint
		Name  string `gorm:"size:32;uniqueIndex"`
		Price string `gorm:"type:numeric(8,2)"`
	}
	if err := db.AutoMigrate(&pet{}); err != nil {
		t.Fatal(err)
	}
	if err := db.Create(&pet{Name: "cat", Price: "12.5"}).Error; err != nil {
		t.Fatal(err)
	}
	var got pet
	if err := db.First(&got, "name = ?", "cat").Error; err != nil || got.Price != "12.50" {
		t.Errorf("%+v, %v", got, err)
	}

	// A *sql.DB opened with "pgline" does as well, as Conn.
	db2, err := gorm.Open(postgres.New(postgres.Config{Conn: sqlDB}), &gorm.Config{})
	if err != nil {
		t.Fatal(err)
	}
	got = pet{}
	if err := db2.Where(&pet{Name: "cat"}).First(&got).Error; err != nil || got.Price != "12.50" {
		t.Errorf("through Conn: %+v, %v", got, err)
	}
}
