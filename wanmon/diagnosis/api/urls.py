from rest_framework.routers import SimpleRouter

from wanmon.diagnosis.api.views import FindingViewSet

router = SimpleRouter(trailing_slash=False)
router.register("findings", FindingViewSet, basename="finding")
urlpatterns = router.urls
