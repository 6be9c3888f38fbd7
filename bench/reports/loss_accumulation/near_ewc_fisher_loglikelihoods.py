# Source: https://github.com/thuyngch/Overcoming-Catastrophic-Forgetting/issues/4
# Report: corrected variant of the reported Fisher loop: backward once per batch and sum the squared gradients instead of keeping every batch's log-likelihoods in a list
# Shape: same loop over the loader, but each batch's log-likelihood is backwarded inside the iteration and only loglikelihood.item() (a float) is kept in the list
# Expect: near-miss: must be silent

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

	# Accumulate the squared gradients batch by batch
	loglikelihoods = []
	for i, (X, Y) in enumerate(data_loader):
		if i >= n_batches:
			break
		X = X.view(X.shape[0], -1).to(model.device)
		Y = Y.to(model.device)
		logits = model(X)
		loglikelihood = F.log_softmax(logits, dim=1)[range(X.shape[0]), Y].mean()
		model.zero_grad()
		loglikelihood.backward()
		for idx, param in enumerate(model.parameters()):
			fishers[idx] += param.grad.detach() ** 2 / n_batches
		loglikelihoods.append(loglikelihood.item())

	print('mean log-likelihood: {:.4f}'.format(sum(loglikelihoods) / max(len(loglikelihoods), 1)))
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
