# Source: https://github.com/ajbrock/BigGAN-PyTorch/issues/25
# Report: BigGAN's training function zeroed D's optimizer once per iteration, before the loop over num_D_steps, so with several D steps each D update also applied the gradients of the previous D steps; the author confirmed the typo and fixed it
# Shape: the author's fix: D.optim.zero_grad() at the top of every D step, so only the inner accumulation loop sums gradients before each D.optim.step()
# Expect: near-miss: must be silent
import torch

import losses
import utils


def GAN_training_function(G, D, GD, z_, y_, ema, state_dict, config):
    def train(x, y):
        G.optim.zero_grad()
        D.optim.zero_grad()
        x = torch.split(x, config['batch_size'])
        y = torch.split(y, config['batch_size'])
        counter = 0

        if config['toggle_grads']:
            utils.toggle_grad(D, True)
            utils.toggle_grad(G, False)

        for step_index in range(config['num_D_steps']):
            D.optim.zero_grad()
            for accumulation_index in range(config['num_D_accumulations']):
                z_.sample_()
                y_.sample_()
                D_fake, D_real = GD(z_[:config['batch_size']], y_[:config['batch_size']],
                                    x[counter], y[counter], train_G=False,
                                    split_D=config['split_D'])
                D_loss_real, D_loss_fake = losses.discriminator_loss(D_fake, D_real)
                D_loss = (D_loss_real + D_loss_fake) / float(config['num_D_accumulations'])
                D_loss.backward()
                counter += 1
            if config['D_ortho'] > 0.0:
                utils.ortho(D, config['D_ortho'])
            D.optim.step()

        if config['toggle_grads']:
            utils.toggle_grad(D, False)
            utils.toggle_grad(G, True)

        G.optim.zero_grad()
        for accumulation_index in range(config['num_G_accumulations']):
            z_.sample_()
            y_.sample_()
            D_fake = GD(z_, y_, train_G=True, split_D=config['split_D'])
            G_loss = losses.generator_loss(D_fake) / float(config['num_G_accumulations'])
            G_loss.backward()
        if config['G_ortho'] > 0.0:
            utils.ortho(G, config['G_ortho'], blacklist=[p for p in G.shared.parameters()])
        G.optim.step()

        if config['ema']:
            ema.update(state_dict['itr'])
        return {'G_loss': float(G_loss.item()),
                'D_loss_real': float(D_loss_real.item()),
                'D_loss_fake': float(D_loss_fake.item())}
    return train
