"""inventory 0001-0002 squashed into one (Django's ``replaces``): docs/architecture.md, "Migrations"."""

import django.core.validators
import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    replaces = [("inventory", "0001_initial"), ("inventory", "0002_path_rtt_ms")]

    initial = True

    dependencies = []

    operations = [
        migrations.CreateModel(
            name="Carrier",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "code",
                    models.CharField(
                        max_length=32,
                        unique=True,
                        validators=[
                            django.core.validators.RegexValidator(
                                "^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$", "letters, digits, '_', '.', '-' (max 32)"
                            )
                        ],
                    ),
                ),
                ("name", models.CharField(max_length=200)),
                (
                    "kind",
                    models.CharField(
                        choices=[
                            ("nren", "National research network"),
                            ("backbone", "Backbone"),
                            ("transatlantic", "Transatlantic / intercontinental"),
                            ("other", "Other"),
                        ],
                        default="other",
                        max_length=20,
                    ),
                ),
                ("noc_email", models.EmailField(blank=True, max_length=254)),
                ("notes", models.TextField(blank=True)),
            ],
            options={
                "ordering": ["code"],
            },
        ),
        migrations.CreateModel(
            name="Path",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("capacity_mbps", models.PositiveBigIntegerField(blank=True, null=True)),
                ("valid_from", models.DateTimeField()),
                ("valid_to", models.DateTimeField(blank=True, null=True)),
                ("note", models.CharField(blank=True, max_length=200)),
            ],
            options={
                "ordering": ["src__code", "dst__code", "valid_from"],
            },
        ),
        migrations.CreateModel(
            name="Equipment",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "name",
                    models.CharField(
                        max_length=100,
                        unique=True,
                        validators=[
                            django.core.validators.RegexValidator(
                                "^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$", "letters, digits, '_', '.', '-' (max 100)"
                            )
                        ],
                    ),
                ),
                ("vendor", models.CharField(blank=True, max_length=100)),
                ("model", models.CharField(blank=True, max_length=100)),
                ("os_version", models.CharField(blank=True, max_length=100)),
                (
                    "role",
                    models.CharField(
                        choices=[
                            ("router", "Router"),
                            ("switch", "Switch"),
                            ("transport", "Optical / SDH transport"),
                            ("firewall", "Firewall"),
                            ("host", "Host"),
                            ("other", "Other"),
                        ],
                        default="router",
                        max_length=20,
                    ),
                ),
                ("location", models.CharField(blank=True, max_length=200)),
                ("backplane_capacity_mbps", models.PositiveBigIntegerField(blank=True, null=True)),
                ("linecard_capacity_mbps", models.PositiveBigIntegerField(blank=True, null=True)),
                ("known_reordering", models.BooleanField(default=False)),
                ("quirks", models.TextField(blank=True)),
                (
                    "carrier",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="equipment",
                        to="inventory.carrier",
                    ),
                ),
            ],
            options={
                "verbose_name_plural": "equipment",
                "ordering": ["name"],
            },
        ),
        migrations.CreateModel(
            name="Interface",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("name", models.CharField(max_length=100)),
                ("if_index", models.PositiveIntegerField(blank=True, null=True)),
                ("speed_mbps", models.PositiveBigIntegerField(blank=True, null=True)),
                (
                    "mtu",
                    models.PositiveIntegerField(
                        blank=True,
                        null=True,
                        validators=[
                            django.core.validators.MinValueValidator(68),
                            django.core.validators.MaxValueValidator(65535),
                        ],
                    ),
                ),
                ("blade", models.CharField(blank=True, max_length=50)),
                ("description", models.CharField(blank=True, max_length=200)),
                (
                    "equipment",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="interfaces", to="inventory.equipment"
                    ),
                ),
            ],
            options={
                "ordering": ["equipment__name", "name"],
            },
        ),
        migrations.CreateModel(
            name="Circuit",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("cid", models.CharField(max_length=100, verbose_name="circuit id")),
                ("capacity_mbps", models.PositiveBigIntegerField(blank=True, null=True)),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("planned", "Planned"),
                            ("active", "Active"),
                            ("maintenance", "In maintenance"),
                            ("decommissioned", "Decommissioned"),
                        ],
                        default="active",
                        max_length=20,
                    ),
                ),
                ("description", models.CharField(blank=True, max_length=200)),
                (
                    "carrier",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT, related_name="circuits", to="inventory.carrier"
                    ),
                ),
                (
                    "a_interface",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="circuits_a",
                        to="inventory.interface",
                    ),
                ),
                (
                    "z_interface",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="circuits_z",
                        to="inventory.interface",
                    ),
                ),
            ],
            options={
                "ordering": ["carrier__code", "cid"],
            },
        ),
        migrations.CreateModel(
            name="PathHop",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("position", models.PositiveSmallIntegerField()),
                (
                    "equipment",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT, related_name="path_hops", to="inventory.equipment"
                    ),
                ),
                (
                    "interface",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="path_hops",
                        to="inventory.interface",
                    ),
                ),
                (
                    "path",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="hops", to="inventory.path"
                    ),
                ),
            ],
            options={
                "ordering": ["path", "position"],
            },
        ),
        migrations.CreateModel(
            name="Site",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "code",
                    models.CharField(
                        max_length=32,
                        unique=True,
                        validators=[
                            django.core.validators.RegexValidator(
                                "^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$", "letters, digits, '_', '.', '-' (max 32)"
                            )
                        ],
                    ),
                ),
                ("name", models.CharField(max_length=200)),
                (
                    "tier",
                    models.PositiveSmallIntegerField(
                        blank=True, null=True, validators=[django.core.validators.MaxValueValidator(3)]
                    ),
                ),
                (
                    "lat",
                    models.FloatField(
                        blank=True,
                        null=True,
                        validators=[
                            django.core.validators.MinValueValidator(-90),
                            django.core.validators.MaxValueValidator(90),
                        ],
                    ),
                ),
                (
                    "lon",
                    models.FloatField(
                        blank=True,
                        null=True,
                        validators=[
                            django.core.validators.MinValueValidator(-180),
                            django.core.validators.MaxValueValidator(180),
                        ],
                    ),
                ),
                ("notes", models.TextField(blank=True)),
            ],
            options={
                "ordering": ["code"],
                "constraints": [
                    models.CheckConstraint(
                        condition=models.Q(
                            ("lat__isnull", True), models.Q(("lat__gte", -90), ("lat__lte", 90)), _connector="OR"
                        ),
                        name="inventory_site_lat_range",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(
                            ("lon__isnull", True), models.Q(("lon__gte", -180), ("lon__lte", 180)), _connector="OR"
                        ),
                        name="inventory_site_lon_range",
                    ),
                ],
            },
        ),
        migrations.AddField(
            model_name="path",
            name="dst",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT, related_name="paths_in", to="inventory.site"
            ),
        ),
        migrations.AddField(
            model_name="path",
            name="src",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT, related_name="paths_out", to="inventory.site"
            ),
        ),
        migrations.CreateModel(
            name="Host",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "name",
                    models.CharField(
                        max_length=100,
                        validators=[
                            django.core.validators.RegexValidator(
                                "^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$", "letters, digits, '_', '.', '-' (max 100)"
                            )
                        ],
                    ),
                ),
                ("address", models.GenericIPAddressField(blank=True, null=True)),
                (
                    "role",
                    models.CharField(
                        choices=[
                            ("transfer", "Transfer host"),
                            ("test", "Test host (nuttcp/owamp)"),
                            ("agent", "Agent host"),
                            ("other", "Other"),
                        ],
                        default="test",
                        max_length=20,
                    ),
                ),
                (
                    "site",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="hosts", to="inventory.site"
                    ),
                ),
            ],
            options={
                "ordering": ["site__code", "name"],
            },
        ),
        migrations.AddField(
            model_name="equipment",
            name="site",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="equipment",
                to="inventory.site",
            ),
        ),
        migrations.CreateModel(
            name="Agent",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "name",
                    models.CharField(
                        max_length=100,
                        unique=True,
                        validators=[
                            django.core.validators.RegexValidator(
                                "^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$", "letters, digits, '_', '.', '-' (max 100)"
                            )
                        ],
                    ),
                ),
                ("token_hash", models.CharField(max_length=64, unique=True)),
                (
                    "token_prefix",
                    models.CharField(help_text="first characters of the token, to recognise it", max_length=12),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("revoked_at", models.DateTimeField(blank=True, null=True)),
                ("last_seen_at", models.DateTimeField(blank=True, null=True)),
                ("version", models.CharField(blank=True, max_length=50)),
                (
                    "equipment",
                    models.ManyToManyField(
                        blank=True, help_text="may poll via SNMP", related_name="agents", to="inventory.equipment"
                    ),
                ),
                (
                    "site",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT, related_name="agents", to="inventory.site"
                    ),
                ),
            ],
            options={
                "ordering": ["site__code", "name"],
            },
        ),
        migrations.CreateModel(
            name="SiteContact",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("name", models.CharField(blank=True, max_length=200)),
                ("email", models.EmailField(max_length=254)),
                (
                    "role",
                    models.CharField(
                        choices=[
                            ("noc", "Network operations (alerts)"),
                            ("network", "Network engineering"),
                            ("transfer", "Data transfer service"),
                            ("maintenance", "Maintenance notices"),
                            ("management", "Management"),
                        ],
                        default="noc",
                        max_length=20,
                    ),
                ),
                (
                    "site",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE, related_name="contacts", to="inventory.site"
                    ),
                ),
            ],
            options={
                "ordering": ["site__code", "role", "email"],
            },
        ),
        migrations.CreateModel(
            name="Trunk",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "name",
                    models.CharField(
                        max_length=100,
                        unique=True,
                        validators=[
                            django.core.validators.RegexValidator(
                                "^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$", "letters, digits, '_', '.', '-' (max 100)"
                            )
                        ],
                    ),
                ),
                ("description", models.CharField(blank=True, max_length=200)),
                ("members", models.ManyToManyField(blank=True, related_name="trunks", to="inventory.interface")),
            ],
            options={
                "ordering": ["name"],
            },
        ),
        migrations.AddConstraint(
            model_name="interface",
            constraint=models.UniqueConstraint(
                fields=("equipment", "name"), name="inventory_interface_unique_equipment_name"
            ),
        ),
        migrations.AddConstraint(
            model_name="interface",
            constraint=models.UniqueConstraint(
                condition=models.Q(("if_index__isnull", False)),
                fields=("equipment", "if_index"),
                name="inventory_interface_unique_equipment_ifindex",
            ),
        ),
        migrations.AddConstraint(
            model_name="circuit",
            constraint=models.UniqueConstraint(fields=("carrier", "cid"), name="inventory_circuit_unique_cid"),
        ),
        migrations.AddConstraint(
            model_name="pathhop",
            constraint=models.UniqueConstraint(fields=("path", "position"), name="inventory_pathhop_unique_position"),
        ),
        migrations.AddIndex(
            model_name="path",
            index=models.Index(fields=["src", "dst", "valid_from"], name="inventory_path_lookup"),
        ),
        migrations.AddConstraint(
            model_name="path",
            constraint=models.CheckConstraint(
                condition=models.Q(("src", models.F("dst")), _negated=True), name="inventory_path_src_ne_dst"
            ),
        ),
        migrations.AddConstraint(
            model_name="path",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("valid_to__isnull", True), ("valid_to__gt", models.F("valid_from")), _connector="OR"
                ),
                name="inventory_path_valid_interval",
            ),
        ),
        migrations.AddConstraint(
            model_name="path",
            constraint=models.UniqueConstraint(
                condition=models.Q(("valid_to__isnull", True)),
                fields=("src", "dst"),
                name="inventory_path_unique_current",
            ),
        ),
        migrations.AddConstraint(
            model_name="host",
            constraint=models.UniqueConstraint(fields=("site", "name"), name="inventory_host_unique_site_name"),
        ),
        migrations.AddConstraint(
            model_name="equipment",
            constraint=models.CheckConstraint(
                condition=models.Q(("site__isnull", False), ("carrier__isnull", False), _negated=True),
                name="inventory_equipment_site_or_carrier",
            ),
        ),
        migrations.AddConstraint(
            model_name="sitecontact",
            constraint=models.UniqueConstraint(
                fields=("site", "email", "role"), name="inventory_sitecontact_unique_site_email_role"
            ),
        ),
        migrations.AddField(
            model_name="path",
            name="rtt_ms",
            field=models.FloatField(blank=True, null=True, validators=[django.core.validators.MinValueValidator(0)]),
        ),
    ]
