from django.apps import AppConfig


class InventoryConfig(AppConfig):
    """The topology the diagnosis reasons about: sites, carriers, equipment, circuits, trunks, paths, agents."""

    name = "wanmon.inventory"
    label = "inventory"
    verbose_name = "Inventory"
