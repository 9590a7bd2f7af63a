"""Alerting API routes, included under /api/v1/ by wanmon/urls.py."""

from rest_framework.routers import SimpleRouter

from wanmon.alerts.api import views

router = SimpleRouter(trailing_slash=False)
router.register("incidents", views.IncidentViewSet, basename="incident")
router.register("silences", views.SilenceViewSet, basename="silence")
router.register("notifications", views.NotificationViewSet, basename="notification")
router.register("routing-rules", views.RoutingRuleViewSet, basename="routingrule")
router.register("subscriptions", views.SubscriptionViewSet, basename="subscription")

urlpatterns = router.urls
