# EventBridge Scheduler schedules of the reporting service (Terraform, hashicorp/aws provider).
variable "report_function_arn" {
  type = string
}

resource "aws_iam_role" "scheduler" {
  name               = "reporting-scheduler"
  assume_role_policy = jsonencode({ Version = "2012-10-17", Statement = [] })
}

resource "aws_scheduler_schedule" "month_end_report" {
  name                         = "month-end-report"
  group_name                   = "reporting"
  schedule_expression          = "cron(0 18 LW * ? *)"
  schedule_expression_timezone = "America/New_York"

  flexible_time_window {
    mode = "OFF"
  }

  target {
    arn      = var.report_function_arn
    role_arn = aws_iam_role.scheduler.arn
    retry_policy {
      maximum_event_age_in_seconds = 86400
      maximum_retry_attempts       = 185
    }
  }
}

resource "aws_scheduler_schedule" "cache_warmer" {
  group_name          = "reporting"
  schedule_expression = "rate(15 minutes)"
  start_date          = "2026-03-01T00:00:00Z"
  end_date            = "2026-12-31T00:00:00Z"

  flexible_time_window {
    mode                      = "FLEXIBLE"
    maximum_window_in_minutes = 5
  }

  target {
    arn      = var.report_function_arn
    role_arn = aws_iam_role.scheduler.arn
  }
}

resource "aws_scheduler_schedule" "audit_once" {
  name                         = "audit-2026q1"
  group_name                   = "reporting"
  schedule_expression          = "at(2026-03-29T02:30:00)"
  schedule_expression_timezone = "Europe/Berlin"
  action_after_completion      = "DELETE"

  flexible_time_window {
    mode = "OFF"
  }

  target {
    arn      = var.report_function_arn
    role_arn = aws_iam_role.scheduler.arn
  }
}
