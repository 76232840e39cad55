"""What communication costs: the predictor's network and calls, a job's workload, validation against SMPI."""
