from django.conf import settings
from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from accounts.api import TokenObtainApi
from dataset.views import home
from hctqa import health, views
from hctqa.api_index import ApiIndex

api_patterns = [
    path("", ApiIndex.as_view(), name="api-index"),
    path("", include("dataset.api_urls")),
    path("", include("leaderboard.api_urls")),
    path("", include("releases.api_urls")),
    path("", include("tracks.api_urls")),
    path("", include("endpoints.api_urls")),
    path("annotate/", include("annotation.annotate_api_urls")),
    path("verify/", include("annotation.verify_api_urls")),
    path("ingest/", include("ingest.api_urls")),
    path("auth/token/", TokenObtainApi.as_view(), name="api-token"),
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    # Swagger UI under the site's Content-Security-Policy: its start-up script is a separate
    # request, and templates/drf_spectacular/swagger_ui.html moves its inline styles out.
    path("docs/", SpectacularSwaggerSplitView.as_view(url_name="api-schema"), name="api-docs"),
]

urlpatterns = [
    path("", home, name="home"),
    path("healthz", health.healthz, name="healthz"),
    path("welcome/", views.landing, name="landing"),
    # Browsers ask for /favicon.ico on pages that name no icon (the API's JSON, say).
    path("favicon.ico", views.favicon),
    path("", include("dataset.urls")),
    path("leaderboard/", include("leaderboard.urls")),
    path("tracks/", include("tracks.urls")),
    path("releases/", include("releases.urls")),
    path("annotate/", include("annotation.annotate_urls")),
    path("ingest/", include("ingest.urls")),
    path("discussion/", include("discussion.urls")),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("accounts/", include("accounts.urls")),
    path("api/", include(api_patterns)),
    path("admin/", admin.site.urls),
    # Uploaded table images. Small and few; a production proxy may serve MEDIA_ROOT instead.
    path(f"{settings.MEDIA_URL.lstrip('/')}<path:path>", views.media, name="media"),
]

handler403 = "hctqa.views.permission_denied"
