from django.urls import path

from .apis import admin, annotator, auth, guidelines, review, suggestions

urlpatterns = [
    path("auth/login/", auth.LoginApi.as_view(), name="auth-login"),
    path("auth/logout/", auth.LogoutApi.as_view(), name="auth-logout"),
    path("auth/me/", auth.MeApi.as_view(), name="auth-me"),
    path("auth/password-link/", auth.PasswordLinkCheckApi.as_view(), name="auth-password-link"),
    path("auth/set-password/", auth.SetPasswordApi.as_view(), name="auth-set-password"),
    # The annotator's own work.
    path("assignments/", annotator.AssignmentListApi.as_view(), name="assignment-list"),
    path(
        "assignments/<int:assignment_id>/keys/",
        annotator.AssignmentKeyListApi.as_view(),
        name="assignment-key-list",
    ),
    path("next-key/", annotator.NextKeyApi.as_view(), name="next-key"),
    path("keys/<int:key_id>/", annotator.KeyDetailApi.as_view(), name="key-detail"),
    path("keys/<int:key_id>/annotation/", annotator.AnnotationApi.as_view(), name="annotation"),
    path("keys/<int:key_id>/flag/", annotator.KeyFlagApi.as_view(), name="key-flag"),
    path(
        "keys/<int:key_id>/patterns/",
        annotator.PatternCreateApi.as_view(),
        name="pattern-create",
    ),
    path(
        "keys/<int:key_id>/patterns/<int:pattern_id>/",
        annotator.PatternDetailApi.as_view(),
        name="pattern-detail",
    ),
    path(
        "keys/<int:key_id>/submit/",
        annotator.AnnotationSubmitApi.as_view(),
        name="annotation-submit",
    ),
    path(
        "keys/<int:key_id>/reopen/",
        annotator.AnnotationReopenApi.as_view(),
        name="annotation-reopen",
    ),
    # The machine's suggestions for a key (docs/evidence.md, "Suggestions").
    path(
        "keys/<int:key_id>/suggestions/",
        suggestions.SuggestionListApi.as_view(),
        name="suggestion-list",
    ),
    path(
        "keys/<int:key_id>/suggestions/<int:suggestion_id>/accept/",
        suggestions.SuggestionAcceptApi.as_view(),
        name="suggestion-accept",
    ),
    path(
        "keys/<int:key_id>/suggestions/<int:suggestion_id>/dismiss/",
        suggestions.SuggestionDismissApi.as_view(),
        name="suggestion-dismiss",
    ),
    path(
        "studies/<int:study_id>/guidelines/",
        guidelines.StudyGuidelinesApi.as_view(),
        name="study-guidelines",
    ),
    path(
        "studies/<int:study_id>/guidelines/acknowledge/",
        guidelines.StudyGuidelinesAcknowledgeApi.as_view(),
        name="study-guidelines-acknowledge",
    ),
    # Staff only.
    path("admin/studies/", admin.StudyListApi.as_view(), name="admin-study-list"),
    path(
        "admin/studies/<int:study_id>/",
        admin.StudyDetailApi.as_view(),
        name="admin-study-detail",
    ),
    path(
        "admin/studies/<int:study_id>/guidelines/",
        guidelines.StudyGuidelinesAdminApi.as_view(),
        name="admin-study-guidelines",
    ),
    path(
        "admin/studies/<int:study_id>/batches/",
        admin.BatchListCreateApi.as_view(),
        name="admin-batch-list",
    ),
    path(
        "admin/batches/<int:batch_id>/assignments/",
        admin.AssignmentCreateApi.as_view(),
        name="admin-assignment-create",
    ),
    path(
        "admin/batches/<int:batch_id>/assignments/extend/",
        admin.AssignmentExtendApi.as_view(),
        name="admin-assignment-extend",
    ),
    path(
        "admin/batches/<int:batch_id>/keys/",
        admin.BatchKeyListApi.as_view(),
        name="admin-batch-key-list",
    ),
    path(
        "admin/batches/<int:batch_id>/progress/",
        admin.BatchProgressApi.as_view(),
        name="admin-batch-progress",
    ),
    path("admin/annotators/", admin.AnnotatorListApi.as_view(), name="admin-annotator-list"),
    path(
        "admin/annotators/<int:user_id>/password-link/",
        admin.AnnotatorPasswordLinkApi.as_view(),
        name="admin-annotator-password-link",
    ),
    path(
        "admin/annotators/<int:user_id>/deactivate/",
        admin.AnnotatorDeactivateApi.as_view(),
        name="admin-annotator-deactivate",
    ),
    # Curators (admins and the curator group): the review queue and the gold annotations.
    path("review/studies/", review.ReviewStudyListApi.as_view(), name="review-study-list"),
    path(
        "review/studies/<int:study_id>/queue/",
        review.ReviewQueueApi.as_view(),
        name="review-queue",
    ),
    path("review/keys/<int:key_id>/", review.ReviewKeyDetailApi.as_view(), name="review-key"),
    path("review/keys/<int:key_id>/gold/", review.GoldApi.as_view(), name="review-gold"),
    path(
        "review/keys/<int:key_id>/gold/patterns/",
        review.GoldPatternCreateApi.as_view(),
        name="review-gold-pattern-create",
    ),
    path(
        "review/keys/<int:key_id>/gold/patterns/<int:pattern_id>/",
        review.GoldPatternDetailApi.as_view(),
        name="review-gold-pattern-detail",
    ),
    path(
        "review/keys/<int:key_id>/gold/submit/",
        review.GoldSubmitApi.as_view(),
        name="review-gold-submit",
    ),
    path(
        "review/keys/<int:key_id>/gold/reopen/",
        review.GoldReopenApi.as_view(),
        name="review-gold-reopen",
    ),
]
