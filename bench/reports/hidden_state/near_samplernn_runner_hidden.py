# Source: https://github.com/deepsound-project/samplernn-pytorch/blob/master/model.py
# Report: SampleRNN raw-audio model trained with truncated BPTT: the Runner keeps each frame-level GRU's last hidden state in a dict on self so the next chunk of the same audio sequences continues from it
# Shape: Predictor.forward runs once per batch and run_rnn stores new_hidden.detach() in self.hidden_states[rnn]; the next chunk starts from the value but not from its graph, and reset_hidden_states() clears the dict at every new sequence; validation runs under torch.no_grad()
# Expect: near-miss: must be silent
import torch
from torch.nn import functional as F


def linear_dequantize(samples, q_levels):
    return samples.float() / (q_levels / 2) - 1


class FrameLevelRNN(torch.nn.Module):
    def __init__(self, frame_size, n_frame_samples, n_rnn, dim):
        super().__init__()
        self.frame_size, self.n_frame_samples, self.dim = frame_size, n_frame_samples, dim
        self.h0 = torch.nn.Parameter(torch.zeros(n_rnn, dim))
        self.input_expand = torch.nn.Conv1d(n_frame_samples, dim, kernel_size=1)
        self.rnn = torch.nn.GRU(input_size=dim, hidden_size=dim, num_layers=n_rnn, batch_first=True)
        self.upsampling = torch.nn.ConvTranspose1d(dim, dim, kernel_size=frame_size, stride=frame_size)

    def forward(self, prev_samples, upper_tier_conditioning, hidden):
        batch_size = prev_samples.size(0)
        inp = self.input_expand(prev_samples.permute(0, 2, 1)).permute(0, 2, 1)
        if upper_tier_conditioning is not None:
            inp = inp + upper_tier_conditioning
        if hidden is None:
            n_rnn = self.h0.size(0)
            hidden = self.h0.unsqueeze(1).expand(n_rnn, batch_size, self.dim).contiguous()
        output, hidden = self.rnn(inp, hidden)
        output = self.upsampling(output.permute(0, 2, 1)).permute(0, 2, 1)
        return output, hidden


class SampleLevelMLP(torch.nn.Module):
    def __init__(self, frame_size, dim, q_levels):
        super().__init__()
        self.q_levels = q_levels
        self.embedding = torch.nn.Embedding(q_levels, q_levels)
        self.input = torch.nn.Conv1d(q_levels, dim, kernel_size=frame_size, bias=False)
        self.output = torch.nn.Conv1d(dim, q_levels, kernel_size=1)

    def forward(self, prev_samples, upper_tier_conditioning):
        batch_size = upper_tier_conditioning.size(0)
        x = self.embedding(prev_samples.contiguous().view(-1)).view(batch_size, -1, self.q_levels)
        x = F.relu(self.input(x.permute(0, 2, 1)) + upper_tier_conditioning.permute(0, 2, 1))
        x = self.output(x).permute(0, 2, 1).contiguous()
        return F.log_softmax(x.view(-1, self.q_levels), dim=-1).view(batch_size, -1, self.q_levels)


class SampleRNN(torch.nn.Module):
    def __init__(self, frame_sizes=(16, 4), n_rnn=2, dim=1024, q_levels=256):
        super().__init__()
        self.q_levels = q_levels
        n_frame_samples, rnns = 1, []
        for fs in frame_sizes:
            n_frame_samples *= fs
            rnns.append(FrameLevelRNN(fs, n_frame_samples, n_rnn, dim))
        self.frame_level_rnns = torch.nn.ModuleList(rnns)
        self.sample_level_mlp = SampleLevelMLP(frame_sizes[0], dim, q_levels)

    @property
    def lookback(self):
        return self.frame_level_rnns[-1].n_frame_samples


class Runner:
    def __init__(self, model):
        self.model = model
        self.reset_hidden_states()

    def reset_hidden_states(self):
        self.hidden_states = {rnn: None for rnn in self.model.frame_level_rnns}

    def run_rnn(self, rnn, prev_samples, upper_tier_conditioning):
        output, new_hidden = rnn(prev_samples, upper_tier_conditioning, self.hidden_states[rnn])
        self.hidden_states[rnn] = new_hidden.detach()
        return output


class Predictor(Runner, torch.nn.Module):
    def __init__(self, model):
        torch.nn.Module.__init__(self)
        Runner.__init__(self, model)

    def forward(self, input_sequences, reset):
        if reset:
            self.reset_hidden_states()
        batch_size = input_sequences.size(0)
        upper_tier_conditioning = None
        for rnn in reversed(self.model.frame_level_rnns):
            from_index = self.model.lookback - rnn.n_frame_samples
            to_index = -rnn.n_frame_samples + 1
            prev_samples = 2 * linear_dequantize(input_sequences[:, from_index:to_index], self.model.q_levels)
            prev_samples = prev_samples.contiguous().view(batch_size, -1, rnn.n_frame_samples)
            upper_tier_conditioning = self.run_rnn(rnn, prev_samples, upper_tier_conditioning)
        bottom = self.model.frame_level_rnns[0].frame_size
        return self.model.sample_level_mlp(input_sequences[:, self.model.lookback - bottom:],
                                           upper_tier_conditioning)


class Trainer:
    def __init__(self, model, criterion, optimizer, dataset, val_dataset, cuda=True):
        self.model, self.criterion, self.optimizer = model, criterion, optimizer
        self.dataset, self.val_dataset, self.cuda = dataset, val_dataset, cuda
        self.iterations = 0
        self.stats = {"training_loss": [], "validation_loss": []}

    def train(self):
        for self.iterations, data in enumerate(self.dataset, self.iterations + 1):
            batch_inputs = [x.cuda() if self.cuda and torch.is_tensor(x) else x for x in data[:-1]]
            batch_target = data[-1].cuda() if self.cuda else data[-1]
            plugin_data = [None]

            def closure():
                batch_output = self.model(*batch_inputs)
                loss = self.criterion(batch_output, batch_target)
                loss.backward()
                if plugin_data[0] is None:
                    plugin_data[0] = loss.item()
                return loss

            self.optimizer.zero_grad()
            self.optimizer.step(closure)
            self.stats["training_loss"].append(plugin_data[0])

    def evaluate(self):
        self.model.eval()
        loss_sum, n_examples = 0.0, 0
        with torch.no_grad():
            for data in self.val_dataset:
                batch_inputs = [x.cuda() if self.cuda and torch.is_tensor(x) else x for x in data[:-1]]
                batch_target = data[-1].cuda() if self.cuda else data[-1]
                batch_output = self.model(*batch_inputs)
                loss_sum += F.nll_loss(batch_output.view(-1, batch_output.size(-1)),
                                       batch_target.view(-1)).item() * batch_target.size(0)
                n_examples += batch_target.size(0)
        self.model.train()
        self.stats["validation_loss"].append(loss_sum / n_examples)
