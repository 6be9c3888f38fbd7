# Source: https://github.com/thuyngch/Overcoming-Catastrophic-Forgetting/issues/4
# Report: EWC Fisher update on a ResNet-50 runs CUDA out of memory at "log_liklihoods.append(output[:, target])" inside the loop over the task's data loader
# Shape: compute_fisher appends each batch's log-likelihoods (graph-attached model output) to a list bound before the loop and only backwards once after the loop, so every batch's activations stay on the GPU
# Expect: TML001 line 33

#------------------------------------------------------------------------------
#    Libraries
#------------------------------------------------------------------------------
import torch
from torch import autograd
import torch.nn.functional as F

from tqdm import tqdm


#------------------------------------------------------------------------------
#	Compute Fisher Information Matrix (FIM)
#------------------------------------------------------------------------------
def compute_fisher(model, data_loader, n_batches):
	# Instantiate the FIM
	fishers = []
	for param in model.parameters():
		fishers.append(torch.zeros_like(param))

	# Collect the log-likelihoods of the sampled batches
	loglikelihoods = []
	for i, (X, Y) in enumerate(data_loader):
		if i >= n_batches:
			break
		X = X.view(X.shape[0], -1).to(model.device)
		Y = Y.to(model.device)
		logits = model(X)
		loglikelihoods.append(F.log_softmax(logits, dim=1)[range(X.shape[0]), Y])  # expect: TML001

	# Compute the FIM (squared gradients of the mean log-likelihood)
	loglikelihood = torch.cat(loglikelihoods).mean()
	model.zero_grad()
	loglikelihood.backward()
	for idx, param in enumerate(model.parameters()):
		fishers[idx] += param.grad.detach() ** 2
	return fishers


#------------------------------------------------------------------------------
#    Custom loss function
#------------------------------------------------------------------------------
def ewc_loss(lamda, fishers, prev_opt_thetas, cur_thetas):
	penalties = [torch.sum(fisher * (prev_opt_theta - cur_theta) ** 2)
				 for fisher, prev_opt_theta, cur_theta in zip(fishers, prev_opt_thetas, cur_thetas)]
	return lamda / 2 * torch.stack(penalties).sum()


#------------------------------------------------------------------------------
#	Training process using EWC method
#------------------------------------------------------------------------------
def train_ewc(model, train_loader, optimizer, base_loss_fn,
			lamda, fishers, prev_opt_thetas, epoch, description=""):
	model.train()
	loss_train = 0
	pbar = tqdm(train_loader)
	pbar.set_description(description)
	for inputs, targets in pbar:
		inputs, targets = inputs.to(model.device), targets.to(model.device)
		cur_thetas = list(model.parameters())

		optimizer.zero_grad()
		logits = model(inputs)
		loss_crossentropy = base_loss_fn(logits, targets)
		loss_ewc = ewc_loss(lamda, fishers, prev_opt_thetas, cur_thetas)

		loss = loss_crossentropy + loss_ewc
		loss_train += loss.item()
		loss.backward()
		optimizer.step()

	loss_train /= len(train_loader)
	print('epoch {} loss_train: {:.6f}'.format(epoch, loss_train))
	return loss_train
