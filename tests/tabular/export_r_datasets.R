# Exports data sets shipped with R (packages datasets and MASS) as CSV files, to test knn-cli's
# handling of text (categorical) columns, missing values and R's row names.
#
#   Rscript tests/tabular/export_r_datasets.R OUT_DIR
#
# Every file is written by plain write.csv(df, file), so it has exactly R's layout: a first column
# with an empty header holding the row names, every string and factor level in double quotes,
# numbers unquoted with up to 15 significant digits, a missing value as the unquoted cell NA, and
# "\n" line ends. No row is dropped and no value is changed, except where noted below.

args <- commandArgs(trailingOnly = TRUE)
if (length(args) != 1) {
  cat("usage: Rscript export_r_datasets.R OUT_DIR\n", file = stderr())
  quit(status = 2)
}
out_dir <- args[[1]]
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)

suppressPackageStartupMessages(library(MASS))

# birthwt codes race as 1, 2, 3; its help page gives the meaning (1 = white, 2 = black,
# 3 = other). As a factor it is written as text, so the file has a text column.
birthwt_race <- MASS::birthwt
birthwt_race$race <- factor(birthwt_race$race, levels = 1:3, labels = c("white", "black", "other"))

# CO2 is a groupedData object (package nlme's class); as.data.frame keeps its columns and row
# names and leaves only the plain data frame, which is what write.csv writes anyway.
sets <- list(
  cars93     = MASS::Cars93,
  airquality = datasets::airquality,
  birthwt    = birthwt_race,
  esoph      = datasets::esoph,
  pima_tr    = MASS::Pima.tr,
  pima_tr2   = MASS::Pima.tr2,
  mtcars     = datasets::mtcars,
  co2        = as.data.frame(datasets::CO2),
  survey     = MASS::survey,
  biopsy     = MASS::biopsy
)

for (name in names(sets)) {
  df <- sets[[name]]
  file <- file.path(out_dir, paste0(name, ".csv"))
  write.csv(df, file)
  text_cols <- names(df)[!vapply(df, is.numeric, logical(1))]
  na_cols <- names(df)[vapply(df, anyNA, logical(1))]
  cat(sprintf("%-11s %4d rows %2d columns  text: %s  NA: %s\n", name, nrow(df), ncol(df),
              if (length(text_cols)) paste(text_cols, collapse = ",") else "-",
              if (length(na_cols)) paste(na_cols, collapse = ",") else "-"))
}
