from django.urls import path

from accounts import views

app_name = "accounts"

urlpatterns = [
    path("", views.account, name="account"),
    path("sign-up/", views.sign_up, name="sign_up"),
    path("token/", views.token_rotate, name="token_rotate"),
    path("approval/", views.approval_request, name="approval_request"),
    path("emails/", views.email_preferences, name="email_preferences"),
    path("emails/confirm/", views.email_confirmation_send, name="email_confirmation_send"),
    path("emails/confirm/<str:token>/", views.email_confirm, name="email_confirm"),
    path("approval-requests/", views.approval_requests, name="approval_requests"),
    path(
        "approval-requests/<int:request_id>/decide/",
        views.approval_request_decide,
        name="approval_request_decide",
    ),
    path("notifications/", views.notifications, name="notifications"),
    path("notifications/read/", views.notifications_read, name="notifications_read"),
    path(
        "notifications/<int:notification_id>/",
        views.notification_open,
        name="notification_open",
    ),
]
