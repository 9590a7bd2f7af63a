"""Inventory API routes, included under /api/v1/ by wanmon/urls.py."""

from rest_framework.routers import DefaultRouter

from wanmon.inventory.api import views

router = DefaultRouter()
router.register("carriers", views.CarrierViewSet)
router.register("sites", views.SiteViewSet)
router.register("site-contacts", views.SiteContactViewSet)
router.register("hosts", views.HostViewSet)
router.register("equipment", views.EquipmentViewSet)
router.register("interfaces", views.InterfaceViewSet)
router.register("circuits", views.CircuitViewSet)
router.register("trunks", views.TrunkViewSet)
router.register("paths", views.PathViewSet)
router.register("agents", views.AgentViewSet)

urlpatterns = router.urls
