from django.apps import AppConfig


class DemoConfig(AppConfig):
    """The demonstration: the LHC topology and scenario, its simulated agents, and months of seeded history.

    It sits above every other app (it fills them all), so nothing imports it.
    """

    name = "wanmon.demo"
    label = "demo"
    verbose_name = "Demo"
