# One case of bench/logreg_multinomial_path_vs_glmnet.sh: glmnet's family = "multinomial" path at schmp's
# lambdas, on the standardised columns, and its objective at each, on schmp's scale (lambda times
# schmp's objective is glmnet's mean loss plus lambda times the penalty): at its default thresh, then
# tighter ones until its objective is within 1e-6 of schmp's at every lambda.
#   Rscript multinomial_path_glmnet.R DATA.svm TABLE.csv
suppressMessages({library(glmnet); library(Matrix)})
a <- commandArgs(TRUE)
lines <- strsplit(readLines(a[1]), " ")
y <- sapply(lines, function(r) r[1])
entries <- lapply(seq_along(lines), function(r) {
  e <- lines[[r]][-1]; e <- e[e != ""]
  kv <- matrix(as.numeric(unlist(strsplit(e, ":"))), ncol=2, byrow=TRUE)
  cbind(r, kv)
})
e <- do.call(rbind, entries)
x <- as.matrix(sparseMatrix(i=e[,1], j=e[,2], x=e[,3]))
table <- read.csv(a[2])
lambda <- table$lambda
n <- nrow(x)
sds <- apply(x, 2, function(c) sqrt(mean((c - mean(c))^2)))
classes <- as.integer(factor(y))
# For each thresh (glmnet's default first, then tighter): the fit's seconds, and how far its objective is
# above schmp's, relative, at its worst lambda (negative: below).
runs <- c()
for (thresh in c(1e-7, 1e-9, 1e-11, 1e-13)) {
  t0 <- Sys.time()
  fit <- glmnet(x, factor(y), family="multinomial", standardize=TRUE, lambda=lambda, thresh=thresh, maxit=1e7)
  seconds <- as.numeric(Sys.time() - t0, units="secs")
  worst <- -Inf
  for (k in seq_along(lambda)) {
    B <- sapply(fit$beta, function(b) b[, k]); a0 <- fit$a0[, k]
    Z <- x %*% B + matrix(a0, n, length(a0), byrow=TRUE)
    top <- apply(Z, 1, max)
    loss <- mean(log(rowSums(exp(Z - top))) + top - Z[cbind(1:n, classes)])
    theirs <- loss + lambda[k] * sum(abs(B * sds))
    ours <- lambda[k] * table$objective[k]
    worst <- max(worst, (theirs - ours) / ours)
  }
  runs <- c(runs, sprintf("{\"thresh\": %g, \"seconds\": %.6g, \"above\": %.6g}", thresh, seconds, worst))
  if (worst <= 1e-6) break
}
cat("[", paste(runs, collapse=", "), "]\n")
